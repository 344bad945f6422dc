//! The lock of an output folder: one run at a time writes into it.
//!
//! A lock file ([`LOCK_FILE`]) created with `create_new` (atomically: its contents are written
//! to a temporary file first and hard-linked to the lock's name, which fails if the lock
//! exists) holding the pid, host, start time, command line and a token of the run. Why a file
//! and not `flock`: it works the same on the network file systems that clusters write their
//! results to (where `flock` may be unsupported or local to one host), needs no new
//! dependency, and names the run that holds it, which the refusal prints.
//!
//! A lock outlives a run killed by SIGKILL (or a machine that crashed). It is taken as stale,
//! and removed, when it was made on this host by a process that is gone: no process with its
//! pid, or one started at another time (a pid reused) — told by `/proc` on Linux. A lock of
//! another host, or on a system without `/proc`, cannot be checked: the refusal says so and
//! how to remove the file once that run is known to be gone.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::OutputError;

/// The lock file's name in the output folder.
pub const LOCK_FILE: &str = ".run.lock";

/// The held lock of an output folder; dropping it removes the lock file (if it is still this
/// one's).
#[derive(Debug)]
#[must_use = "the output folder is locked only while the OutputLock lives"]
pub struct OutputLock {
    path: PathBuf,
    token: String,
}

/// Whether a process is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Process {
    Running,
    Gone,
    /// Cannot be told (no `/proc`).
    Unknown,
}

/// The state of `pid` on this host; `started`, if given, is its start time in clock ticks
/// since boot (field 22 of `/proc/<pid>/stat`): another start time means the pid was reused.
pub(crate) fn process_state(pid: u32, started: Option<u64>) -> Process {
    if !Path::new("/proc/self/stat").exists() {
        return Process::Unknown;
    }
    match (start_ticks(pid), started) {
        // Killed but not yet reaped by its parent (a zombie): gone too.
        (Some(_), _) if state(pid) == Some('Z') || state(pid) == Some('X') => Process::Gone,
        (None, _) => Process::Gone,
        (Some(now), Some(then)) if now != then => Process::Gone,
        _ => Process::Running,
    }
}

/// The state letter of `pid` (field 3 of `/proc/<pid>/stat`: R, S, D, Z, …).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// Start time of `pid` in clock ticks since boot (Linux), if it runs.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid … : comm may hold spaces and parentheses; fields after the last ')'
    // start at field 3, so field 22 is the 20th of them.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// `YYYY-MM-DD HH:MM:SS UTC` of a Unix time.
fn utc(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// What a lock file says about its run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Holder {
    pid: Option<u32>,
    host: String,
    started: String,
    command: String,
    proc_start: Option<u64>,
    token: String,
}

impl Holder {
    fn this_process() -> Holder {
        let pid = std::process::id();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let command = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        Holder {
            pid: Some(pid),
            host: host_name(),
            started: utc(now.as_secs()),
            command: command.replace('\n', " "),
            proc_start: start_ticks(pid),
            token: format!("{pid}-{}", now.as_nanos()),
        }
    }

    fn text(&self) -> String {
        let mut s = String::from("# the lock of a run writing into this folder (poplar-rs apps)\n");
        if let Some(pid) = self.pid {
            s += &format!("pid {pid}\n");
        }
        s += &format!("host {}\nstarted {}\n", self.host, self.started);
        if let Some(t) = self.proc_start {
            s += &format!("proc_start {t}\n");
        }
        s += &format!("token {}\ncommand {}\n", self.token, self.command);
        s
    }

    fn parse(text: &str) -> Holder {
        let mut h = Holder::default();
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "pid" => h.pid = value.trim().parse().ok(),
                "host" => h.host = value.trim().into(),
                "started" => h.started = value.trim().into(),
                "proc_start" => h.proc_start = value.trim().parse().ok(),
                "token" => h.token = value.trim().into(),
                "command" => h.command = value.into(),
                _ => {}
            }
        }
        h
    }

    fn describe(&self) -> String {
        format!(
            "pid {} on host {}, started {}, command `{}`",
            self.pid.map_or("?".into(), |p| p.to_string()),
            if self.host.is_empty() {
                "?"
            } else {
                &self.host
            },
            if self.started.is_empty() {
                "?"
            } else {
                &self.started
            },
            self.command
        )
    }

    /// Whether the run that wrote this lock is known to be gone.
    fn is_gone(&self) -> (bool, Process) {
        if self.host != host_name() {
            return (false, Process::Unknown);
        }
        let Some(pid) = self.pid else {
            return (false, Process::Unknown);
        };
        if pid == std::process::id() && self.proc_start == start_ticks(pid) {
            // This very process (another handle): running.
            return (false, Process::Running);
        }
        let state = process_state(pid, self.proc_start);
        (state == Process::Gone, state)
    }
}

/// Writes `text` as a new file `path`, atomically: fails with `AlreadyExists` if `path`
/// exists; never leaves `path` empty or half written. Its temporary file (`<name>.new<pid>`)
/// is created exclusively, never through a link planted at its name: a name that is taken is
/// an error of another kind ([`poplar_exe::files::CreateError`] as the source), not "held".
fn create_new_with(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_file_name(format!(
        "{}.new{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let mut f = poplar_exe::files::create_temporary(&tmp).map_err(std::io::Error::other)?;
    let written = f.write_all(text.as_bytes());
    drop(f);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            // No hard links on this file system: create_new, then write (a reader may see an
            // empty lock for a moment, which it takes as held).
            let mut f = poplar_exe::files::create_new(path)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        }
        r => r,
    }
}

/// Whether `e` is [`create_new_with`]'s refusal of a taken temporary name.
fn taken(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(|i| i.downcast_ref::<poplar_exe::files::CreateError>().is_some())
}

impl OutputLock {
    /// Takes the lock of `dir`, or says who holds it. A stale lock (its run died on this host)
    /// is removed first, with a note on stderr.
    pub fn acquire(dir: &Path) -> Result<OutputLock, OutputError> {
        let path = dir.join(LOCK_FILE);
        let me = Holder::this_process();
        let lock_err = |source| OutputError::Lock {
            dir: dir.into(),
            lock: path.clone(),
            source,
        };
        for _ in 0..5 {
            match create_new_with(&path, &me.text()) {
                Ok(()) => {
                    return Ok(OutputLock {
                        path,
                        token: me.token,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                // The temporary's name is taken (a planted link): that error, as it is.
                Err(e) if taken(&e) => {
                    let inner = e.into_inner().expect("checked by taken");
                    let taken = inner
                        .downcast::<poplar_exe::files::CreateError>()
                        .expect("checked by taken");
                    return Err(OutputError::Taken(*taken));
                }
                Err(e) => return Err(lock_err(e)),
            }
            let text = match crate::input::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // just released
                Err(e) => return Err(lock_err(e)),
            };
            let holder = Holder::parse(&text);
            let (gone, state) = holder.is_gone();
            if !gone {
                let hint = match state {
                    Process::Running => String::new(),
                    _ if holder.pid.is_none() => format!(
                        ". The lock does not name its run (a run killed while taking it?): if no \
                         run is writing into this folder, remove {}",
                        path.display()
                    ),
                    _ => format!(
                        ". That run cannot be checked from here ({}): if it is gone, remove {}",
                        if holder.host != host_name() {
                            format!("it ran on host {}, this is {}", holder.host, host_name())
                        } else {
                            "no /proc on this system".into()
                        },
                        path.display()
                    ),
                };
                return Err(OutputError::Locked {
                    dir: dir.into(),
                    holder: holder.describe(),
                    hint,
                });
            }
            // Stale: set it aside under a name of ours, and remove it only if it is still the
            // stale lock read above (another run may have replaced it meanwhile).
            let aside = dir.join(format!("{LOCK_FILE}.stale{}", std::process::id()));
            match std::fs::rename(&path, &aside) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(lock_err(e)),
            }
            if crate::input::read_to_string(&aside).ok().as_deref() == Some(text.as_str()) {
                let _ = std::fs::remove_file(&aside);
                eprintln!(
                    "note: removed the stale lock of {} ({}): that run is gone",
                    dir.display(),
                    holder.describe()
                );
            } else {
                // Another run's fresh lock: put it back (unless a third took the folder).
                let _ = std::fs::hard_link(&aside, &path);
                let _ = std::fs::remove_file(&aside);
            }
        }
        Err(lock_err(std::io::Error::other(
            "the lock kept changing hands; try again",
        )))
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let ours = crate::input::read_to_string(&self.path)
            .map(|t| Holder::parse(&t).token == self.token)
            .unwrap_or(false);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("app-support-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_764_177_723), "2025-11-26 17:22:03 UTC");
    }

    #[test]
    fn a_second_holder_is_refused_with_the_first_named_and_the_lock_goes_with_the_first() {
        let d = scratch("two");
        let first = OutputLock::acquire(&d).unwrap();
        let text = std::fs::read_to_string(first.path()).unwrap();
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        let e = OutputLock::acquire(&d).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, OutputError::Locked { .. }), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id()))
                && msg.contains("started ")
                && msg.contains("command `")
                && msg.contains("is in use by another run"),
            "{msg}"
        );
        assert!(!msg.contains("remove"), "a running holder: {msg}");
        drop(first);
        assert!(!d.join(LOCK_FILE).exists(), "released with its holder");
        let again = OutputLock::acquire(&d).unwrap();
        drop(again);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A pid that is not running: a child that has exited (pids are not reused that fast).
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_of_a_dead_process_on_this_host_is_recovered() {
        let d = scratch("stale");
        let dead = Holder {
            pid: Some(dead_pid()),
            host: host_name(),
            started: utc(0),
            command: "cardiac run --out x".into(),
            proc_start: Some(1),
            token: "dead".into(),
        };
        std::fs::write(d.join(LOCK_FILE), dead.text()).unwrap();
        let lock = OutputLock::acquire(&d).unwrap();
        let text = std::fs::read_to_string(lock.path()).unwrap();
        assert!(text.contains(&format!("pid {}", std::process::id())));
        drop(lock);
        // A reused pid (running, but started at another time) is stale too.
        let reused = Holder {
            pid: Some(std::process::id()),
            proc_start: Some(start_ticks(std::process::id()).unwrap() + 1),
            ..dead
        };
        std::fs::write(d.join(LOCK_FILE), reused.text()).unwrap();
        drop(OutputLock::acquire(&d).unwrap());
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert!(left.is_empty(), "nothing is left: {left:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_killed_unreaped_process_is_gone() {
        let mut c = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = c.id();
        assert_eq!(process_state(pid, None), Process::Running);
        c.kill().unwrap();
        // A zombie until reaped.
        let t = std::time::Instant::now();
        while process_state(pid, None) != Process::Gone && t.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(process_state(pid, None), Process::Gone);
        c.wait().unwrap();
    }

    #[test]
    fn a_lock_of_another_host_is_kept_and_the_refusal_says_how_to_remove_it() {
        let d = scratch("host");
        let other = Holder {
            pid: Some(dead_pid()),
            host: "node-that-is-not-this-one".into(),
            started: utc(0),
            command: "hdiff run --out x".into(),
            proc_start: None,
            token: "t".into(),
        };
        std::fs::write(d.join(LOCK_FILE), other.text()).unwrap();
        let msg = OutputLock::acquire(&d).unwrap_err().to_string();
        assert!(
            msg.contains("node-that-is-not-this-one")
                && msg.contains("hdiff run --out x")
                && msg.contains(&format!("remove {}", d.join(LOCK_FILE).display())),
            "{msg}"
        );
        assert!(d.join(LOCK_FILE).exists(), "kept");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_lock_that_names_no_run_is_kept_and_the_refusal_says_how_to_remove_it() {
        let d = scratch("garbled");
        std::fs::write(d.join(LOCK_FILE), "").unwrap();
        let msg = OutputLock::acquire(&d).unwrap_err().to_string();
        assert!(
            msg.contains("does not name its run")
                && msg.contains(&format!("remove {}", d.join(LOCK_FILE).display())),
            "{msg}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_lock_replaced_by_another_run_is_not_removed_by_the_first() {
        let d = scratch("replaced");
        let lock = OutputLock::acquire(&d).unwrap();
        // Another run took the folder (after removing this one's lock as stale, say).
        std::fs::write(d.join(LOCK_FILE), "pid 1\nhost h\ntoken other\n").unwrap();
        drop(lock);
        assert!(d.join(LOCK_FILE).exists(), "the other run's lock stays");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
