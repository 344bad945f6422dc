//! `poplar`: reports of saved poplar-rs executables and profiles.
//!
//! - `poplar memory EXE`: per-tile memory report;
//! - `poplar profile FILE`: the summary of a saved profile (JSON), or the static cycle model of
//!   an executable (cycles of one execution of each phase);
//! - `poplar trace PROFILE -o trace.json`: the Chrome trace (opens in Perfetto);
//! - `poplar plot FILE... -o DIR`: SVG plots (cycles per tile, per phase, per label, the
//!   timeline; memory per tile);
//! - `poplar report EXE [PROFILE] -o report.html`: one self-contained HTML page (memory per
//!   tile, program tree, liveness, execution), opened in any browser without a network.
//!
//! Every output follows one rule, checked before the work: an existing file is refused unless
//! `--force`, one of the command's inputs always; files are written atomically (a temporary
//! file beside them, synced, renamed).

mod plot;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use poplar_exe::exe::{ExecutableError, FileError};
use poplar_exe::profile::{CycleModel, MemoryReport, Profile, ProfileError};
use poplar_exe::Executable;

/// Errors of the CLI, each naming the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// An executable that does not load; the file is named once (I/O errors name it already).
    #[error("{}", named(path, source, matches!(source, ExecutableError::File(FileError::Io { .. }))))]
    Exe {
        path: String,
        source: ExecutableError,
    },
    /// A profile that does not load; the file is named once.
    #[error("{}", named(path, source, matches!(source, ProfileError::Io { .. })))]
    Profile { path: String, source: ProfileError },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: cannot draw the plot: {message}")]
    Plot { path: String, message: String },
    #[error("{0}")]
    Report(#[from] poplar_viewer::ReportError),
    /// An output refused (exists, is an input) or not written; with its cause.
    #[error("{}", with_causes(.0))]
    Output(#[from] app_support::output::OutputError),
    /// A profile whose recorded executable checksum is not the executable's.
    #[error("{path}: a profile of another executable: it records executable checksum {found:#018x}, {exe} has {expected:#018x}")]
    OtherExecutable {
        path: String,
        exe: String,
        expected: u64,
        found: u64,
    },
    /// A profile that is not of the executable it is reported with.
    #[error("{path}: {source}")]
    ProfileOf {
        path: String,
        source: poplar_viewer::ReportError,
    },
}

const AFTER_HELP: &str = "\
Executables are checked on load (structure, bounds, alignment, checksums). Nothing is run, so \
the codelets they use need not be linked into this binary: the executables of an application \
with its own codelets (e.g. `cardiac compile -o FILE`) are reported like any other.";

#[derive(Parser)]
#[command(name = "poplar", version, about = "Memory and cycle reports of poplar-rs executables and profiles", after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Memory per tile of a saved executable: always-live vs temporary, by category and item,
    /// and the tiles closest to the limit.
    Memory {
        exe: PathBuf,
        /// How many of the fullest tiles to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Summary of a saved profile (JSON), or the static cycle model of a saved executable.
    Profile {
        file: PathBuf,
        /// Print the profile's JSON (normalised) instead of the summary.
        #[arg(long)]
        json: bool,
    },
    /// Write the Chrome trace-event file of a saved profile (opens in Perfetto).
    Trace {
        profile: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        /// Replace the output file if it exists (never the profile itself).
        #[arg(long)]
        force: bool,
    },
    /// Render SVG plots: from a profile, tiles.svg, phases.svg, labels.svg and timeline.svg; from an
    /// executable, memory.svg.
    Plot {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output directory (created if missing).
        #[arg(short, long)]
        output: PathBuf,
        /// Phases drawn in phases.svg.
        #[arg(long, default_value_t = 6)]
        top: usize,
        /// Replace plots of an earlier run in the output directory (never an input).
        #[arg(long)]
        force: bool,
    },
    /// Write one self-contained HTML page of an executable and, optionally, a profile of it:
    /// memory per tile (heat map, categories, items), the program tree, liveness per step and,
    /// with the profile, the execution (timeline, labels, phases, exchange matrices).
    Report {
        exe: PathBuf,
        /// A profile of a run of this executable (`profile.json`).
        profile: Option<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
        /// The page's title (default: the executable's file name).
        #[arg(long)]
        title: Option<String>,
        /// Replace the output file if it exists.
        #[arg(long)]
        force: bool,
    },
}

/// `error: cause: cause…`.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s += &format!(": {c}");
        cur = c.source();
    }
    s
}

/// A file given on the command line: a profile (JSON) or an executable.
enum Input {
    Profile(Box<Profile>),
    Exe(Box<Executable>),
}

/// `path: error`, unless the error already names the path.
fn named(path: &str, e: &dyn std::fmt::Display, names_path: bool) -> String {
    if names_path {
        e.to_string()
    } else {
        format!("{path}: {e}")
    }
}

fn load_profile(path: &Path) -> Result<Profile, CliError> {
    Profile::load(path).map_err(|source| CliError::Profile {
        path: path.display().to_string(),
        source,
    })
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |source| CliError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn load_exe(path: &Path) -> Result<Executable, CliError> {
    Executable::load_unlinked(path).map_err(|source| CliError::Exe {
        path: path.display().to_string(),
        source,
    })
}

fn load(path: &Path) -> Result<Input, CliError> {
    use std::io::Read;
    // Not opened unless a regular file: opening a FIFO blocks until a writer comes. The
    // loaders refuse such a path with a typed error naming it.
    let meta = std::fs::metadata(path).map_err(io_err(path))?;
    if !meta.is_file() {
        return Ok(Input::Profile(Box::new(load_profile(path)?)));
    }
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(io_err(path))?;
    // JSON (an object, or anything else that is not an executable: an array, an empty or blank
    // file) is read as a profile, whose errors say what the file is.
    let json = head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_none_or(|&b| b == b'{' || b == b'[');
    if json {
        Ok(Input::Profile(Box::new(load_profile(path)?)))
    } else {
        Ok(Input::Exe(Box::new(load_exe(path)?)))
    }
}

/// Writes `text` to `path` atomically (checked by `check_output_file` first).
fn write(path: &Path, text: &str) -> Result<(), CliError> {
    Ok(app_support::output::write_atomic(path, text)?)
}

/// Draws a plot into a temporary file beside `path` and renames it into place once complete.
fn plot_into(
    path: &Path,
    draw: impl FnOnce(&Path) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let file = app_support::output::AtomicPath::new(path).map_err(io_err(path))?;
    draw(file.tmp()).map_err(|e| match e {
        CliError::Plot { message, .. } => CliError::Plot {
            path: path.display().to_string(),
            message,
        },
        e => e,
    })?;
    file.commit().map_err(io_err(path))
}

/// Prints to stdout; a closed pipe (`poplar profile X | head`) is not an error.
fn out(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.cmd {
        Cmd::Memory { exe, top, json } => {
            let report = MemoryReport::from_executable(&load_exe(&exe)?);
            if json {
                out(&serde_json::to_string_pretty(&report).expect("a report serializes"));
                out("\n");
            } else {
                out(&report.text(top));
            }
        }
        Cmd::Profile { file, json } => match load(&file)? {
            Input::Profile(p) if json => out(&(p.to_json() + "\n")),
            Input::Profile(p) => out(&p.text_summary()),
            Input::Exe(e) => out(&CycleModel::new(&e).text_summary()),
        },
        Cmd::Trace {
            profile,
            output,
            force,
        } => {
            app_support::output::check_output_file(&output, force, &[&profile])?;
            let p = load_profile(&profile)?;
            let text = serde_json::to_string(&p.chrome_trace()).expect("a trace serializes");
            write(&output, &text)?;
            eprintln!(
                "wrote {} ({} spans{})",
                output.display(),
                p.timeline.spans.len(),
                if p.timeline.truncated {
                    ", timeline truncated"
                } else {
                    ""
                }
            );
        }
        Cmd::Plot {
            files,
            output,
            top,
            force,
        } => {
            std::fs::create_dir_all(&output).map_err(io_err(&output))?;
            let many = files.len() > 1;
            let inputs: Vec<Input> = files.iter().map(|f| load(f)).collect::<Result<_, _>>()?;
            let name = |k: usize, name: &str| {
                let prefix = if many { format!("{k}-") } else { String::new() };
                output.join(format!("{prefix}{name}"))
            };
            const PROFILE_PLOTS: [&str; 4] =
                ["tiles.svg", "phases.svg", "labels.svg", "timeline.svg"];
            // Every output is checked before any is drawn.
            let given: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
            for (k, input) in inputs.iter().enumerate() {
                let outs: &[&str] = match input {
                    Input::Profile(_) => &PROFILE_PLOTS,
                    Input::Exe(_) => &["memory.svg"],
                };
                for n in outs {
                    app_support::output::check_output_file(&name(k, n), force, &given)?;
                }
            }
            for (k, input) in inputs.iter().enumerate() {
                match input {
                    Input::Profile(p) => {
                        plot_into(&name(k, "tiles.svg"), |f| plot::tiles(p, f))?;
                        plot_into(&name(k, "phases.svg"), |f| plot::phases(p, f, top))?;
                        plot_into(&name(k, "labels.svg"), |f| plot::labels(p, f))?;
                        plot_into(&name(k, "timeline.svg"), |f| plot::timeline(p, f))?;
                        for n in PROFILE_PLOTS {
                            eprintln!("wrote {}", name(k, n).display());
                        }
                    }
                    Input::Exe(e) => {
                        let m = MemoryReport::from_executable(e);
                        plot_into(&name(k, "memory.svg"), |f| plot::memory(&m, f))?;
                        eprintln!("wrote {}", name(k, "memory.svg").display());
                    }
                }
            }
        }
        Cmd::Report {
            exe,
            profile,
            output,
            title,
            force,
        } => {
            let e = load_exe(&exe)?;
            let title = title.unwrap_or_else(|| {
                exe.file_name()
                    .map_or("executable".into(), |n| n.to_string_lossy().into_owned())
            });
            let mut data = poplar_viewer::ReportData::from_executable(&e, &title);
            let checksum = profile.as_ref().map(|_| e.checksum());
            drop(e);
            let mut inputs = vec![exe.as_path()];
            if let Some(p) = &profile {
                let prof = load_profile(p)?;
                match (prof.executable_checksum, checksum) {
                    (Some(found), Some(expected)) if found != expected => {
                        return Err(CliError::OtherExecutable {
                            path: p.display().to_string(),
                            exe: exe.display().to_string(),
                            expected,
                            found,
                        });
                    }
                    (None, _) => eprintln!(
                        "poplar: warning: {} records no executable checksum (written by an older \
                         version): it cannot be matched to {}; checking its target and phase \
                         names only",
                        p.display(),
                        exe.display()
                    ),
                    _ => {}
                }
                data = data
                    .with_profile(&prof)
                    .map_err(|source| CliError::ProfileOf {
                        path: p.display().to_string(),
                        source,
                    })?;
                inputs.push(p);
            }
            poplar_viewer::write_checked(&output, &data, force, &inputs)?;
            let size = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);
            eprintln!("wrote {} ({:.1} MB)", output.display(), size as f64 / 1e6);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("poplar: {e}");
            ExitCode::FAILURE
        }
    }
}
