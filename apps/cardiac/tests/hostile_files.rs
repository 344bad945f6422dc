//! Hostile and hurried file systems: what `cardiac` does with links planted at the exact names
//! a run will create, checkpoints of a stopped run, two outputs naming one file, output
//! folders that are missing, a damaged snapshot of a resumed run, and inputs that are FIFOs.
//!
//! - a link planted at the write probe (`.write-check-<pid>`), at a result's temporary file
//!   (`.<name>.tmp<pid>`), at the lock's `.new<pid>` file, at a plot's temporary folder or at
//!   a checkpoint's temporary file is never written through: the file it points at is
//!   untouched and the run is refused before any work, naming the link;
//! - a folder holding checkpoints of a stopped run is refused with "continue with --resume"
//!   first, `--force` alone does not remove them (`--discard-checkpoints` does), and stale
//!   checkpoint temporaries are swept;
//! - every output path is checked before the work (`study --json F --plot F`, a missing
//!   folder for `compile -o` or `study --json`);
//! - `--resume` refuses an earlier voltage snapshot cut short, naming it;
//! - a FIFO given as an input is refused at once instead of blocking for ever.
//!
//! The planted names hold the pid of the run: the run is started by `sh -c 'ln -s … NAME$$;
//! exec cardiac …'`, so that `$$` is its pid.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{refused_within, stderr, tmp, BIN};

/// A 1 mm slab for 2 ms with a snapshot every 0.5 ms and a trace: well under a second.
const SMALL: &[&str] = &[
    "run",
    "--dx",
    "1",
    "--tiles",
    "4",
    "--t-end",
    "2",
    "--snapshot-every",
    "0.5",
    "--trace-point",
    "1,1,1",
    "--no-report",
];

/// `ln -s TARGET DIR/<planted>$$; exec cardiac ARGS --out OUT` (each `planted` name gets the
/// run's pid appended; a name in a subfolder has the folder created first).
fn run_with_links(target: &Path, planted: &[(&Path, &str)], args: &[&str], out: &Path) -> Output {
    let mut script = String::new();
    for (k, (_, name)) in planted.iter().enumerate() {
        script += &format!("mkdir -p \"$T{k}\" && ln -s \"$VICTIM\" \"$T{k}/{name}$$\" && ");
    }
    script += "exec \"$BIN\" \"$@\"";
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(&script)
        .arg("sh")
        .args(args)
        .arg("--out")
        .arg(out)
        .env("BIN", BIN)
        .env("VICTIM", target)
        .env("RUST_BACKTRACE", "0");
    for (k, (dir, _)) in planted.iter().enumerate() {
        c.env(format!("T{k}"), dir);
    }
    c.output().expect("run sh")
}

fn victim(d: &Path) -> PathBuf {
    let v = d.join("victim.txt");
    std::fs::write(&v, "precious\n").unwrap();
    v
}

fn untouched(v: &Path) {
    let now = std::fs::read(v).unwrap();
    assert!(
        now == b"precious\n",
        "the link's target was written: {} bytes, starting {:?}",
        now.len(),
        String::from_utf8_lossy(&now[..now.len().min(40)])
    );
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// The first command: a link at the write probe truncated the file it points at.
#[test]
fn a_link_planted_at_the_write_probe_is_refused_and_its_target_untouched() {
    let d = tmp();
    let v = victim(&d);
    let out = d.join("o");
    let o = run_with_links(&v, &[(&out, ".write-check-")], SMALL, &out);
    let err = stderr(&o);
    untouched(&v);
    assert!(!o.status.success(), "the run went on:\n{err}");
    assert!(
        err.contains(".write-check-") && err.contains("a symbolic link"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.join("results.json").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

/// The second command (a link at `.results.json.tmp$$` received the results, and
/// `results.json` became a link to it), and every other name a run creates: refused before
/// any work, the target untouched, no result a link.
#[test]
fn links_planted_at_a_runs_temporary_names_are_refused_before_any_work() {
    let d = tmp();
    let v = victim(&d);
    for (k, name) in [
        ".results.json.tmp",
        ".activation.vtu.tmp",
        ".traces.csv.tmp",
        ".voltage.pvd.tmp",
        ".run.lock.new",
    ]
    .iter()
    .enumerate()
    {
        let out = d.join(format!("o{k}"));
        let o = run_with_links(&v, &[(&out, name)], SMALL, &out);
        let err = stderr(&o);
        untouched(&v);
        assert!(!o.status.success(), "{name}: the run went on:\n{err}");
        assert!(err.contains(name), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(
            !err.contains("timings:") && !String::from_utf8_lossy(&o.stdout).contains("timings:"),
            "{name}: refused after the work"
        );
        for f in ["results.json", "activation.vtu", "traces.csv"] {
            assert!(!is_link(&out.join(f)), "{name}: {f} is a link");
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// The name of the checkpoint a run stopped by `--stop-after 0.5` writes.
fn stopped_checkpoint(d: &Path) -> String {
    let out = d.join("probe");
    let o = support::cardiac(
        &[
            SMALL,
            &["--stop-after", "0.5", "--out", out.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(out.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ckpt"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 1, "{names:?}");
    names.remove(0)
}

/// A link at the temporary file of the checkpoint a run is about to write (the exact name:
/// `checkpoints/.checkpoint_<step>.ckpt.tmp$$`) is refused before any work.
#[test]
fn a_link_planted_at_a_checkpoint_temporary_is_refused() {
    let d = tmp();
    let v = victim(&d);
    let ckpt = stopped_checkpoint(&d);
    let out = d.join("o");
    let ck = out.join("checkpoints");
    let o = run_with_links(
        &v,
        &[(&ck, &format!(".{ckpt}.tmp"))],
        &[SMALL, &["--stop-after", "0.5"]].concat(),
        &out,
    );
    let err = stderr(&o);
    untouched(&v);
    assert!(!o.status.success(), "the run went on:\n{err}");
    assert!(err.contains(&format!(".{ckpt}.tmp")), "{err}");
    assert!(!is_link(&ck.join(&ckpt)), "the checkpoint is a link");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A run stopped with its checkpoint, started again without `--resume`: refused with the way
/// to continue first; `--force` removes no checkpoint; `--discard-checkpoints` does. A
/// checkpoint temporary of a killed run in the checkpoint folder is swept.
#[test]
fn a_stopped_runs_checkpoints_are_refused_first_and_force_keeps_them() {
    let d = tmp();
    let out = d.join("o");
    let o_s = out.to_str().unwrap();
    let o = support::cardiac(&[SMALL, &["--stop-after", "0.5", "--out", o_s]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let ck = out.join("checkpoints");
    let checkpoints = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ckpt"))
            .collect();
        v.sort();
        v
    };
    let before = checkpoints(&ck);
    assert_eq!(before.len(), 1, "{before:?}");
    for extra in [&[][..], &["--force"]] {
        let err = refused_within(
            &[SMALL, extra, &["--out", o_s]].concat(),
            60,
            &["continue with --resume", "--discard-checkpoints"],
        );
        assert!(!err.contains("pass --force"), "{err}");
        assert_eq!(checkpoints(&ck), before, "{extra:?} removed checkpoints");
    }
    // A checkpoint temporary left by a killed run (a pid that is gone) is swept by the next.
    let dead = {
        let mut c = Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let stale = ck.join(format!(".{}.tmp{dead}", before[0]));
    std::fs::write(&stale, vec![0u8; 4096]).unwrap();
    let o = support::cardiac(&[SMALL, &["--resume", o_s, "--out", o_s]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists(), "the stale checkpoint temporary was left");
    // Discarded on request: the new run starts again.
    let o =
        support::cardiac(&[SMALL, &["--force", "--discard-checkpoints", "--out", o_s]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(checkpoints(&ck).is_empty());
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--resume` lists the earlier snapshots in `voltage.pvd` again: one cut short is refused,
/// by name, before the run goes on.
#[test]
fn a_resume_refuses_an_earlier_snapshot_cut_short() {
    let d = tmp();
    let out = d.join("o");
    let o_s = out.to_str().unwrap();
    let o = support::cardiac(&[SMALL, &["--stop-after", "1", "--out", o_s]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let snap = out.join("voltage_00000.500ms.vtu");
    let snap = if snap.exists() {
        snap
    } else {
        std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("ms.vtu"))
            .expect("a snapshot before the stop")
    };
    let bytes = std::fs::read(&snap).unwrap();
    std::fs::write(&snap, &bytes[..100]).unwrap();
    let name = snap.file_name().unwrap().to_string_lossy().into_owned();
    refused_within(
        &[SMALL, &["--resume", o_s, "--out", o_s]].concat(),
        60,
        &[&name, "cut short"],
    );
    assert!(!out.join("voltage.pvd").exists());
    // Whole again, the run resumes.
    std::fs::write(&snap, &bytes).unwrap();
    let o = support::cardiac(&[SMALL, &["--resume", o_s, "--out", o_s]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&d).unwrap();
}

/// `study --json F --plot F` is refused before any work, naming both options; a missing
/// folder for `study --json` or `compile -o` is found before the work.
#[test]
fn outputs_are_checked_before_the_work() {
    let d = tmp();
    let f = d.join("fig").display().to_string();
    let slab = ["--dx", "1", "--tiles", "4"];
    refused_within(
        &[&["study"][..], &slab, &["--json", &f, "--plot", &f]].concat(),
        20,
        &["--json", "--plot", "the same file"],
    );
    assert!(!Path::new(&f).exists());
    let missing = d.join("no/such/folder/x.json").display().to_string();
    refused_within(
        &[&["study"][..], &slab, &["--json", &missing]].concat(),
        20,
        &["does not exist"],
    );
    refused_within(
        &[&["compile"][..], &slab, &["-o", &missing]].concat(),
        20,
        &["does not exist"],
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Makes a FIFO (nobody writes into it: opening it for reading would block for ever).
fn fifo(d: &Path, name: &str) -> String {
    let p = d.join(name);
    let ok = Command::new("mkfifo").arg(&p).status().expect("mkfifo");
    assert!(ok.success());
    p.display().to_string()
}

/// A FIFO given as `--params`, `--stim-cells`, `--electrodes`, a mesh or a `plot-diagonal`
/// input is refused at once, by name (a regression is killed after 30 s, not waited for).
#[test]
fn fifo_inputs_are_refused_instead_of_blocking() {
    let d = tmp();
    let f = fifo(&d, "in.fifo");
    let mesh = fifo(&d, "mesh.msh");
    let out = d.join("o").display().to_string();
    let png = d.join("d.png").display().to_string();
    let slab = ["--dx", "1", "--tiles", "4", "--t-end", "1"];
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "--params", &f, "--out", &out],
        [&["run"][..], &slab, &["--stim-cells", &f, "--out", &out]].concat(),
        [&["run"][..], &slab, &["--electrodes", &f, "--out", &out]].concat(),
        vec!["run", "--mesh", &mesh, "--t-end", "1", "--out", &out],
        vec!["plot-diagonal", &f, "-o", &png],
        vec!["exec", &f],
    ];
    for args in cases {
        let name = if args.contains(&mesh.as_str()) {
            "mesh.msh"
        } else {
            "in.fifo"
        };
        let err = refused_within(&args, 30, &[]);
        assert!(
            err.contains(name)
                && (err.contains("not a regular file (a FIFO)")
                    // The mesh's own check, before it is read.
                    || (name == "mesh.msh" && err.contains("is not a file"))),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}
