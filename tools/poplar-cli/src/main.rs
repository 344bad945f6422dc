//! `poplar`: reports of saved poplar-rs executables and profiles.
//!
//! - `poplar memory EXE`: per-tile memory report;
//! - `poplar profile FILE`: the summary of a saved profile (JSON), or the static cycle model of
//!   an executable (cycles of one execution of each phase);
//! - `poplar trace PROFILE -o trace.json`: the Chrome trace (opens in Perfetto);
//! - `poplar plot FILE... -o DIR`: SVG plots (cycles per tile, per phase, per label, the
//!   timeline; memory per tile);
//! - `poplar report EXE [PROFILE] -o report.html`: one self-contained HTML page (memory per
//!   tile, program tree, liveness, execution), opened in any browser without a network;
//! - `poplar onnx MODEL.onnx --input NAME=FILE… -o DIR`: an ONNX model imported, compiled and
//!   run on the simulated chip (`poponnx`);
//! - `--compare` (of `memory`, `profile` and `report`): two runs side by side, and their
//!   differences B − A (`poplar_viewer::compare`).
//!
//! Every output follows one rule, checked before the work: an existing file is refused unless
//! `--force`, one of the command's inputs always; files are written atomically (a temporary
//! file beside them, synced, renamed).

mod onnx;
mod plot;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use poplar_exe::exe::{ExecutableError, FileError};
use poplar_exe::profile::{CycleModel, MemoryReport, Profile, ProfileError};
use poplar_exe::Executable;
use poplar_viewer::compare::MemoryDiff;
use poplar_viewer::data::MemoryData;
use poplar_viewer::{CompareData, CompareError, Comparison, ReportData};

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
    /// An ONNX model that cannot be imported, compiled or run, or an input array at fault.
    #[error("{0}")]
    Onnx(String),
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
    /// Two runs that cannot be compared (one profile, or a profile against an executable).
    #[error("cannot compare {a} with {b}: {source}")]
    Compare {
        a: String,
        b: String,
        source: poplar_viewer::CompareError,
    },
}

const AFTER_HELP: &str = "\
Executables are checked on load (structure, bounds, alignment, checksums). Nothing is run, so \
the codelets they use need not be linked into this binary: the executables of an application \
with its own codelets (e.g. `cardiac compile -o FILE`) are reported like any other.

Comparing two runs (A, then B after --compare): `poplar memory A --compare B`, `poplar profile A \
--compare B` (two profiles, or two executables' static cycle models) and `poplar report A [PA] \
--compare B [PB] -o cmp.html` print or show both and B - A. Phases are matched by kind and name \
(the k-th of a kind and name in A with the k-th in B), labels by name; what has no match is \
listed apart. Executables of different targets are compared where it means something: a note \
says what is left out (per-tile differences with other tile counts, chip x chip differences \
with other chip counts).";

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
        /// Compare with another executable (B): totals, categories, and the `--top` tiles
        /// whose total changed most, with B - A.
        #[arg(long, value_name = "EXE")]
        compare: Option<PathBuf>,
    },
    /// Summary of a saved profile (JSON), or the static cycle model of a saved executable.
    Profile {
        file: PathBuf,
        /// Print the profile's JSON (normalised) instead of the summary.
        #[arg(long)]
        json: bool,
        /// Compare with another profile (or, for an executable, another executable's static
        /// model): elapsed cycles, phases and labels of both, with B - A.
        #[arg(long, value_name = "FILE")]
        compare: Option<PathBuf>,
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
        /// The page's title (default: the executable's file name; "A vs B" with --compare).
        #[arg(long)]
        title: Option<String>,
        /// Replace the output file if it exists.
        #[arg(long)]
        force: bool,
        /// Compare with another executable (B) and, if the first has one, a profile of it: the
        /// page shows both reports and a Compare view of B - A.
        #[arg(long, num_args = 1..=2, value_names = ["EXE", "PROFILE"])]
        compare: Vec<PathBuf>,
    },
    /// Import an ONNX model, compile it for the simulated chip (memory per tile, whether it
    /// fits) and run it: outputs as `.npy`, the profile and the HTML report in `--out`.
    Onnx(onnx::OnnxArgs),
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
    let n = app_support::input::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(io_err(path))?;
    // JSON (an object, or any other JSON value — an array, a string, a number, `true`,
    // `null` — or an empty or blank file) is read as a profile, whose errors say what the file
    // is; anything else as an executable, whose errors say why it is not one.
    let json = head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_none_or(|&b| b"{[\"-0123456789tfn".contains(&b));
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
        Cmd::Onnx(args) => onnx::run(args)?,
        Cmd::Memory {
            exe,
            top,
            json,
            compare: None,
        } => {
            let report = MemoryReport::from_executable(&load_exe(&exe)?);
            if json {
                out(&pretty(&report));
            } else {
                out(&report.text(top));
            }
        }
        Cmd::Memory {
            exe,
            top,
            json,
            compare: Some(other),
        } => compare_memory(&exe, &other, top, json)?,
        Cmd::Profile {
            file,
            json,
            compare: Some(other),
        } => compare_profiles(&file, &other, json)?,
        Cmd::Profile {
            file,
            json,
            compare: None,
        } => match load(&file)? {
            Input::Profile(p) if json => out(&(p.to_json() + "\n")),
            Input::Profile(p) => out(&p.text_summary()),
            Input::Exe(e) => out(&CycleModel::new(&e).text_summary()),
        },
        Cmd::Trace {
            profile,
            output,
            force,
        } => trace(&profile, &output, force)?,
        Cmd::Plot {
            files,
            output,
            top,
            force,
        } => plot_files(&files, &output, top, force)?,
        Cmd::Report {
            exe,
            profile,
            output,
            title,
            force,
            compare,
        } => {
            let a = Side {
                exe: &exe,
                profile: profile.as_deref(),
            };
            if let Some((b_exe, b_profile)) = compare.split_first() {
                let b = Side {
                    exe: b_exe,
                    profile: b_profile.first().map(PathBuf::as_path),
                };
                report_compare(a, b, &output, title, force)?;
            } else {
                report(a, &output, title, force)?;
            }
        }
    }
    Ok(())
}

/// A value as pretty JSON and a newline.
fn pretty(v: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(v).expect("a report serializes") + "\n"
}

/// `poplar trace`.
fn trace(profile: &Path, output: &Path, force: bool) -> Result<(), CliError> {
    app_support::output::check_output_file(output, force, &[profile])?;
    let p = load_profile(profile)?;
    let text = serde_json::to_string(&p.chrome_trace()).expect("a trace serializes");
    write(output, &text)?;
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
    Ok(())
}

/// `poplar plot`.
fn plot_files(files: &[PathBuf], output: &Path, top: usize, force: bool) -> Result<(), CliError> {
    std::fs::create_dir_all(output).map_err(io_err(output))?;
    let many = files.len() > 1;
    let inputs: Vec<Input> = files.iter().map(|f| load(f)).collect::<Result<_, _>>()?;
    let name = |k: usize, name: &str| {
        let prefix = if many { format!("{k}-") } else { String::new() };
        output.join(format!("{prefix}{name}"))
    };
    const PROFILE_PLOTS: [&str; 4] = ["tiles.svg", "phases.svg", "labels.svg", "timeline.svg"];
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
    Ok(())
}

/// `poplar memory A --compare B`: memory of both, as `poplar memory` counts it, and B − A.
fn compare_memory(a: &Path, b: &Path, top: usize, json: bool) -> Result<(), CliError> {
    let side = |p: &Path| -> Result<_, CliError> {
        let e = load_exe(p)?;
        Ok((
            MemoryData::from_executable(&e),
            u64::from(e.target.bytes_per_tile),
        ))
    };
    let (ma, mb) = (side(a)?, side(b)?);
    let diff = MemoryDiff::new((&ma.0, ma.1), (&mb.0, mb.1), top);
    if json {
        out(&pretty(&diff));
    } else {
        out(&format!("A: {}\nB: {}\n", a.display(), b.display()));
        out(&diff.text());
    }
    Ok(())
}

/// `poplar profile A --compare B`: two profiles, or the static models of two executables.
fn compare_profiles(a: &Path, b: &Path, json: bool) -> Result<(), CliError> {
    let what = |i: &Input| match i {
        Input::Profile(_) => "a profile",
        Input::Exe(_) => "an executable",
    };
    let c = match (load(a)?, load(b)?) {
        (Input::Profile(x), Input::Profile(y)) => Comparison::of_profiles(&x, &y),
        (Input::Exe(x), Input::Exe(y)) => {
            let data =
                |e: &Executable, p: &Path| ReportData::from_executable(e, &p.display().to_string());
            let mut c =
                Comparison::of_reports(&data(&x, a), &data(&y, b), 0).map_err(compare_err(a, b))?;
            c.memory = None;
            c
        }
        (x, y) => {
            let source = CompareError::MixedInputs {
                a: what(&x),
                b: what(&y),
            };
            return Err(compare_err(a, b)(source));
        }
    };
    if json {
        out(&pretty(&c));
    } else {
        out(&format!("A: {}\nB: {}\n", a.display(), b.display()));
        out(&c.text());
    }
    Ok(())
}

fn compare_err<'a>(a: &'a Path, b: &'a Path) -> impl Fn(CompareError) -> CliError + 'a {
    move |source| CliError::Compare {
        a: a.display().to_string(),
        b: b.display().to_string(),
        source,
    }
}

/// An executable and, optionally, a profile of it, as `poplar report` takes them.
#[derive(Clone, Copy)]
struct Side<'a> {
    exe: &'a Path,
    profile: Option<&'a Path>,
}

impl Side<'_> {
    /// The file name of the executable.
    fn name(&self) -> String {
        self.exe
            .file_name()
            .map_or("executable".into(), |n| n.to_string_lossy().into_owned())
    }

    /// The files read.
    fn inputs(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.exe).chain(self.profile)
    }

    /// The report data of the executable and its profile, checked to belong together.
    fn data(&self, title: &str) -> Result<ReportData, CliError> {
        let e = load_exe(self.exe)?;
        let data = ReportData::from_executable(&e, title);
        let checksum = e.checksum();
        drop(e);
        let Some(p) = self.profile else {
            return Ok(data);
        };
        let prof = load_profile(p)?;
        match prof.executable_checksum {
            Some(found) if found != checksum => {
                return Err(CliError::OtherExecutable {
                    path: p.display().to_string(),
                    exe: self.exe.display().to_string(),
                    expected: checksum,
                    found,
                });
            }
            None => eprintln!(
                "poplar: warning: {} records no executable checksum (written by an older \
                 version): it cannot be matched to {}; checking its target and phase names only",
                p.display(),
                self.exe.display()
            ),
            _ => {}
        }
        data.with_profile(&prof)
            .map_err(|source| CliError::ProfileOf {
                path: p.display().to_string(),
                source,
            })
    }
}

/// `poplar report`.
fn report(a: Side, output: &Path, title: Option<String>, force: bool) -> Result<(), CliError> {
    // The output rule first: nothing is loaded for a page that would be refused.
    poplar_viewer::check_output(output, force, &a.inputs().collect::<Vec<_>>())?;
    let data = a.data(&title.unwrap_or_else(|| a.name()))?;
    let inputs: Vec<&Path> = a.inputs().collect();
    poplar_viewer::write_checked(output, &data, force, &inputs)?;
    wrote(output);
    Ok(())
}

/// `poplar report A [PA] --compare B [PB]`: both reports and their comparison in one page.
fn report_compare(
    a: Side,
    b: Side,
    output: &Path,
    title: Option<String>,
    force: bool,
) -> Result<(), CliError> {
    let inputs: Vec<&Path> = a.inputs().chain(b.inputs()).collect();
    // The output rule first: nothing is loaded for a page that would be refused.
    poplar_viewer::check_output(output, force, &inputs)?;
    let (da, db) = (a.data(&a.name())?, b.data(&b.name())?);
    let mut data = CompareData::new(da, db, poplar_viewer::compare::TOP_TILES)
        .map_err(compare_err(a.exe, b.exe))?;
    if let Some(t) = title {
        data.title = t;
    }
    for l in &data.diff.limits {
        eprintln!("poplar: note: {l}");
    }
    poplar_viewer::write_compare_checked(output, &data, force, &inputs)?;
    wrote(output);
    Ok(())
}

fn wrote(output: &Path) {
    let size = std::fs::metadata(output).map(|m| m.len()).unwrap_or(0);
    eprintln!("wrote {} ({:.1} MB)", output.display(), size as f64 / 1e6);
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
