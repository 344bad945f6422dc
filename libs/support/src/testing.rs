//! For the apps' multi-rank tests: the app's binary run on N ranks under `mpiexec`
//! ([`poplar::dist::mpiexec`], with a time limit), or as one plain process for N = 1.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// How long a multi-rank run may take before it is killed (a hang fails the test instead of
/// stalling it).
pub const TIME_LIMIT: Duration = Duration::from_secs(300);

/// Runs `program args…` on `ranks` ranks and returns its output (status, stdout, stderr): a
/// plain process for one rank, `mpiexec -n ranks` otherwise, killed after [`TIME_LIMIT`].
/// Panics, naming the command, if it cannot be started or runs out of time.
pub fn run_on_ranks(ranks: usize, program: impl AsRef<Path>, args: &[&str]) -> Output {
    let program = program.as_ref();
    let name = program.file_name().map_or_else(
        || program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if ranks == 1 {
        return Command::new(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{name} {args:?}: {e}"));
    }
    poplar::dist::mpiexec(ranks, program, args, TIME_LIMIT)
        .unwrap_or_else(|e| panic!("mpiexec -n {ranks} {name} {args:?}: {e}"))
        .0
}

/// Runs `program args…` as one process with stdin closed, killing it after `limit`: its output,
/// or `None` if it was still running.
pub fn run_within(program: &Path, args: &[&str], limit: Duration) -> Option<Output> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(program)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            b
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    status.map(|status| Output {
        status,
        stdout,
        stderr,
    })
}

/// The values every numeric option is tried with: 0, a negative number, NaN, ±infinity, and
/// numbers too small and too large for any option.
pub const HOSTILE_NUMBERS: [&str; 7] = ["0", "-1", "NaN", "inf", "-inf", "1e-300", "1e300"];

/// A sweep of a command line's numeric options over [`HOSTILE_NUMBERS`]: each invocation must end
/// within the limit either in a clean error — a non-zero exit status (not a signal), no panic,
/// and an `error` line naming the option — or in a successful run.
pub struct NumericSweep {
    program: std::path::PathBuf,
    limit: Duration,
    /// Invocations tried.
    pub tried: usize,
    /// What was wrong with each failing invocation.
    pub failures: Vec<String>,
}

impl NumericSweep {
    pub fn new(program: impl AsRef<Path>, limit: Duration) -> NumericSweep {
        NumericSweep {
            program: program.as_ref().to_path_buf(),
            limit,
            tried: 0,
            failures: Vec::new(),
        }
    }

    /// Tries each option of `opts` (name, how many comma-separated numbers it takes) with each
    /// hostile number, on the command line `base` (pairs of option and value, or a word or flag
    /// and `""`) where that option is replaced.
    pub fn options(&mut self, base: &[(&str, &str)], opts: &[(&str, usize)]) {
        for &(opt, arity) in opts {
            for v in HOSTILE_NUMBERS {
                let value = vec![v; arity].join(",");
                self.tried += 1;
                if let Some(f) = self.verdict(&with_option(base, opt, &value), opt) {
                    self.failures.push(f);
                }
            }
        }
    }

    /// What is wrong with one invocation (`None`: a clean error or a successful run).
    fn verdict(&self, args: &[String], opt: &str) -> Option<String> {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let Some(o) = run_within(&self.program, &a, self.limit) else {
            return Some(format!("{args:?}: still running after {:?}", self.limit));
        };
        let err = String::from_utf8_lossy(&o.stderr);
        if err.contains("panicked") {
            return Some(format!("{args:?}: panicked:\n{err}"));
        }
        let Some(code) = o.status.code() else {
            return Some(format!(
                "{args:?}: killed by a signal ({:?}):\n{err}",
                o.status
            ));
        };
        if code == 0 {
            return None;
        }
        match err.lines().find(|l| l.starts_with("error")) {
            Some(line) if line.contains(opt) => None,
            Some(line) => Some(format!("{args:?}: the error does not name {opt}: {line}")),
            None => Some(format!(
                "{args:?}: exit {code} without an error line:\n{err}"
            )),
        }
    }

    /// Panics listing every failing invocation, if any.
    pub fn assert_clean(&self) {
        assert!(
            self.failures.is_empty(),
            "{} of {} invocations failed:\n{}",
            self.failures.len(),
            self.tried,
            self.failures.join("\n")
        );
    }
}

/// `base` with `opt` set to `value` (removed where it was, added at the end).
fn with_option(base: &[(&str, &str)], opt: &str, value: &str) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    for &(o, v) in base {
        if o == opt {
            continue;
        }
        a.push(o.to_string());
        if !v.is_empty() {
            a.push(v.to_string());
        }
    }
    a.push(opt.to_string());
    a.push(value.to_string());
    a
}
