//! Tests of the output folder, its lock and the atomic writes.

use super::*;

const FILES: RunFiles =
    RunFiles::new(&["results.json", "activation.vtu"]).with_series(&[("voltage_", "ms.vtu")]);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("app-support-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn run_files_are_the_names_and_the_series() {
    assert!(FILES.contains("results.json"));
    assert!(FILES.contains("voltage_0010.000ms.vtu"));
    // A series' middle is the run's number, not any text.
    assert!(!FILES.contains("voltage_mine_ms.vtu"));
    assert!(!FILES.contains("voltage_ms.vtu"));
    assert!(!FILES.contains("voltage_ms.vt"));
    assert!(!FILES.contains("notes.txt"));
    assert!(!FILES.contains("results.json.bak"));
}

#[test]
fn a_refused_overwrite_names_the_first_file_and_counts_the_others() {
    let d = scratch("refuse");
    std::fs::write(d.join("voltage_0001.000ms.vtu"), "a").unwrap();
    std::fs::write(d.join("results.json"), "{}").unwrap();
    std::fs::write(d.join("notes.txt"), "mine").unwrap();
    let e = FILES.prepare(&d, false).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&d.join("results.json").display().to_string()),
        "{msg}"
    );
    assert!(
        msg.contains("and 1 more") && msg.contains("--force"),
        "{msg}"
    );
    // Nothing was touched.
    assert_eq!(
        std::fs::read_to_string(d.join("results.json")).unwrap(),
        "{}"
    );
    assert_eq!(
        listing(&d),
        ["notes.txt", "results.json", "voltage_0001.000ms.vtu"]
    );
    // Forced, it is accepted and the earlier run's files go (only those); a folder of
    // other files is always accepted.
    drop(FILES.prepare(&d, true).unwrap());
    assert_eq!(listing(&d), ["notes.txt"]);
    drop(FILES.prepare(&d, false).unwrap());
    assert_eq!(
        listing(&d),
        ["notes.txt"],
        "the write check and the lock leave nothing"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_single_earlier_file_is_named_alone() {
    let d = scratch("single");
    std::fs::write(d.join("activation.vtu"), "a").unwrap();
    let msg = FILES.prepare(&d, false).unwrap_err().to_string();
    assert!(msg.contains("activation.vtu)"), "{msg}");
    assert!(!msg.contains("more"), "{msg}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_file_is_not_a_folder_and_a_missing_folder_is_created() {
    let d = scratch("kinds");
    let f = d.join("file");
    std::fs::write(&f, "x").unwrap();
    let e = FILES.prepare(&f, false).unwrap_err();
    assert!(matches!(e, OutputError::NotAFolder { .. }), "{e}");
    assert!(e.to_string().contains("is a file, not a folder"), "{e}");
    // Under a file: cannot be created, and the message names the folder.
    let e = FILES.prepare(&f.join("sub"), false).unwrap_err();
    assert!(matches!(e, OutputError::Create { .. }), "{e}");
    assert!(e.to_string().contains("file/sub"), "{e}");
    let new = d.join("a").join("b");
    drop(FILES.prepare(&new, false).unwrap());
    assert!(new.is_dir());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_atomic_write_replaces_the_file_and_leaves_no_temporary() {
    let d = scratch("atomic");
    let p = d.join("results.json");
    std::fs::write(&p, "old").unwrap();
    write_atomic(&p, "new").unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    assert_eq!(listing(&d), ["results.json"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_failed_write_leaves_the_old_file_intact() {
    let d = scratch("failed");
    let p = d.join("results.json");
    std::fs::write(&p, "old").unwrap();
    let e = write_atomic_with(&p, |f| {
        f.write_all(b"half of the new")?;
        Err(std::io::Error::other("the data ran out"))
    })
    .unwrap_err();
    assert!(matches!(e, OutputError::Write { .. }));
    assert!(e.to_string().contains("results.json"), "{e}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    assert_eq!(listing(&d), ["results.json"], "no temporary file is left");
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(unix)]
#[test]
fn a_read_only_folder_keeps_its_file_and_is_refused_by_prepare() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("readonly");
    let p = d.join("results.json");
    std::fs::write(&p, "old").unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root (e.g. in a container) writes into read-only folders anyway: then the folder's
    // permissions prove nothing, and this check is skipped (the failure itself is covered
    // by `a_failed_write_leaves_the_old_file_intact`).
    let root_ignores_permissions = std::fs::write(d.join("probe"), "").is_ok();
    if !root_ignores_permissions {
        let e = write_atomic(&p, "new").unwrap_err();
        assert!(e.to_string().contains("results.json"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        let e = FILES.prepare(&d, true).unwrap_err();
        assert!(matches!(e, OutputError::NotWritable { .. }), "{e}");
        assert!(e.to_string().contains("is not writable"), "{e}");
    }
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}
#[test]
fn forced_the_earlier_runs_files_are_removed_and_nothing_else() {
    let d = scratch("force");
    for f in [
        "results.json",
        "activation.vtu",
        "voltage_00001.000ms.vtu",
        "voltage_00002.000ms.vtu",
    ] {
        std::fs::write(d.join(f), "earlier").unwrap();
    }
    for f in [
        "notes.txt",
        "voltage_mine_ms.vtu",
        "results.json.bak",
        "mesh.vtu",
    ] {
        std::fs::write(d.join(f), "mine").unwrap();
    }
    std::fs::create_dir(d.join("voltage_00003.000ms.vtu")).unwrap(); // a folder: kept
    let lock = FILES.prepare(&d, true).unwrap();
    assert_eq!(
        listing(&d),
        [
            LOCK_FILE,
            "mesh.vtu",
            "notes.txt",
            "results.json.bak",
            "voltage_00003.000ms.vtu",
            "voltage_mine_ms.vtu"
        ]
    );
    drop(lock);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_second_run_into_a_locked_folder_is_refused_naming_the_first() {
    let d = scratch("locked");
    let first = FILES.prepare(&d, false).unwrap();
    for force in [false, true] {
        let e = FILES.prepare(&d, force).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, OutputError::Locked { .. }), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
    }
    drop(first);
    drop(FILES.prepare(&d, false).unwrap());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn temporaries_of_dead_runs_are_removed_and_others_kept() {
    let d = scratch("temporaries");
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let dead = c.id();
    c.wait().unwrap();
    let mine = std::process::id();
    for f in [
        format!(".results.json.tmp{dead}"),
        format!(".voltage_00001.000ms.vtu.tmp{dead}"),
        format!(".results.json.tmp{mine}"),
        format!(".notes.txt.tmp{dead}"),
        format!("{LOCK_FILE}.new{dead}"),
        format!(".write-check-{dead}"),
    ] {
        std::fs::write(d.join(f), "x").unwrap();
    }
    drop(FILES.prepare(&d, false).unwrap());
    let left = listing(&d);
    if Path::new("/proc/self/stat").exists() {
        assert_eq!(
            left,
            [
                format!(".notes.txt.tmp{dead}"),
                format!(".results.json.tmp{mine}")
            ]
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn temporary_names_parse_back() {
    let pid = std::process::id();
    assert_eq!(
        parse_temporary_name(&temporary_name("a.json", None)),
        Some(("a.json".into(), pid))
    );
    assert_eq!(
        parse_temporary_name(&temporary_name("d.png", Some("png"))),
        Some(("d.png".into(), pid))
    );
    assert_eq!(parse_temporary_name(".a.json.tmpx"), None);
    assert_eq!(parse_temporary_name("a.json.tmp1"), None);
}

#[test]
fn a_write_failing_midway_leaves_no_temporary_and_no_final_file() {
    let d = scratch("midway");
    let p = d.join("activation.vtu");
    let big = vec![b'x'; 200_000];
    // Every failure point: at the first byte, inside the buffer, past it, at the last byte.
    for after in [0, 1, 1000, 65_536, 100_000, 199_999] {
        fault::fail_writes_after(Some(after));
        let e = write_atomic(&p, &big).unwrap_err();
        fault::fail_writes_after(None);
        assert!(e.to_string().contains("activation.vtu"), "{e}");
        let source = std::error::Error::source(&e).unwrap().to_string();
        assert!(source.contains("no space left"), "{source}");
        assert!(
            listing(&d).is_empty(),
            "after {after} bytes: {:?}",
            listing(&d)
        );
    }
    // Over an earlier file: it is kept whole.
    std::fs::write(&p, "old").unwrap();
    fault::fail_writes_after(Some(5000));
    assert!(write_atomic_with(&p, |f| f.write_all(&big)).is_err());
    fault::fail_writes_after(None);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    assert_eq!(listing(&d), ["activation.vtu"]);
    // With the budget large enough, the whole file.
    fault::fail_writes_after(Some(200_000));
    write_atomic(&p, &big).unwrap();
    fault::fail_writes_after(None);
    assert_eq!(std::fs::read(&p).unwrap(), big);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_file_dropped_uncommitted_leaves_nothing() {
    let d = scratch("dropped");
    let p = d.join("results.json");
    {
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(&[b'y'; 100_000]).unwrap();
    }
    let a = AtomicPath::new(d.join("plot.png")).unwrap();
    assert!(a.tmp().to_string_lossy().ends_with(".png"));
    std::fs::write(a.tmp(), "half").unwrap();
    drop(a);
    assert!(listing(&d).is_empty(), "{:?}", listing(&d));
    let a = AtomicPath::new(d.join("plot.png")).unwrap();
    std::fs::write(a.tmp(), "whole").unwrap();
    a.commit().unwrap();
    assert_eq!(listing(&d), ["plot.png"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(unix)]
#[test]
fn files_are_replaced_not_rewritten_in_place() {
    // A hard link to the old file keeps the old contents: the new file is a new inode,
    // complete before it takes the name.
    let d = scratch("inode");
    let p = d.join("results.json");
    std::fs::write(&p, "old").unwrap();
    std::fs::hard_link(&p, d.join("link")).unwrap();
    write_atomic(&p, "new").unwrap();
    assert_eq!(std::fs::read_to_string(d.join("link")).unwrap(), "old");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_output_file_is_refused_if_it_exists_unforced_or_is_an_input() {
    let d = scratch("single");
    let input = d.join("profile.json");
    std::fs::write(&input, "{}").unwrap();
    let out = d.join("trace.json");
    check_output_file(&out, false, &[&input]).unwrap();
    std::fs::write(&out, "x").unwrap();
    let e = check_output_file(&out, false, &[&input]).unwrap_err();
    assert!(matches!(e, OutputError::Exists { .. }), "{e}");
    assert!(e.to_string().contains("--force"), "{e}");
    check_output_file(&out, true, &[&input]).unwrap();
    // The input itself, by another spelling or through a link: refused, forced or not.
    let other = d.join(".").join("profile.json");
    for force in [false, true] {
        let e = check_output_file(&other, force, &[&input]).unwrap_err();
        assert!(matches!(e, OutputError::OutputIsInput { .. }), "{e}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&input, d.join("sym")).unwrap();
        std::fs::hard_link(&input, d.join("hard")).unwrap();
        for p in ["sym", "hard"] {
            let e = check_output_file(&d.join(p), true, &[&input]).unwrap_err();
            assert!(matches!(e, OutputError::OutputIsInput { .. }), "{p}: {e}");
        }
    }
    let e = check_output_file(&d, true, &[]).unwrap_err();
    assert!(matches!(e, OutputError::IsAFolder { .. }), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A link planted at each name a run creates in its folder — the write check's probe, a
/// result's temporary file, the lock's `.new` file, a plot's temporary folder — is never
/// written through: the file it points at is untouched, and the folder is refused before
/// any work (or the write refused), naming the link.
#[cfg(unix)]
#[test]
fn links_planted_at_the_names_a_run_creates_are_never_followed() {
    let d = scratch("planted");
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let pid = std::process::id();
    for name in [
        format!(".write-check-{pid}"),
        format!(".results.json.tmp{pid}"),
        format!("{LOCK_FILE}.new{pid}"),
        format!(".activation.vtu.tmp{pid}.d"),
    ] {
        let out = d.join(format!("out-{name}"));
        std::fs::create_dir_all(&out).unwrap();
        let link = out.join(&name);
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = FILES.prepare(&out, false).unwrap_err();
        let mut msg = e.to_string();
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            msg += &format!(": {c}");
            cause = c.source();
        }
        assert!(msg.contains(&link.display().to_string()), "{name}: {msg}");
        assert!(msg.contains("a symbolic link"), "{name}: {msg}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!out.join(LOCK_FILE).exists(), "{name}: the lock is left");
    }
    // Planted after the folder was prepared: the write itself is refused.
    let out = d.join("late");
    let lock = FILES.prepare(&out, false).unwrap();
    let link = out.join(format!(".results.json.tmp{pid}"));
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let e = write_atomic(out.join("results.json"), "{}").unwrap_err();
    assert!(matches!(e, OutputError::Taken(_)), "{e}");
    assert!(e.to_string().contains(&link.display().to_string()), "{e}");
    assert!(!out.join("results.json").exists());
    let e = AtomicFile::create(out.join("results.json")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&victim, out.join(format!(".plot.png.tmp{pid}.d"))).unwrap();
    assert!(AtomicPath::new(out.join("plot.png")).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    drop(lock);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A plain file left at this process's own temporary name (a killed earlier process with the
/// same pid) is kept by the check, and replaced when the file is written.
#[test]
fn a_plain_file_at_an_own_temporary_name_is_replaced_when_written() {
    let d = scratch("own-stale");
    let pid = std::process::id();
    let tmp = d.join(format!(".results.json.tmp{pid}"));
    std::fs::write(&tmp, "half").unwrap();
    let lock = FILES.prepare(&d, false).unwrap();
    write_atomic(d.join("results.json"), "{}").unwrap();
    drop(lock);
    assert_eq!(listing(&d), ["results.json"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_single_output_needs_a_folder_that_exists_and_two_outputs_their_own_files() {
    let d = scratch("folder");
    let missing = d.join("no").join("x.json");
    let e = check_output_file(&missing, true, &[]).unwrap_err();
    assert!(matches!(e, OutputError::NoFolder { .. }), "{e}");
    assert!(
        e.to_string().contains(&d.join("no").display().to_string()),
        "{e}"
    );
    check_output_file(&d.join("x.json"), false, &[]).unwrap();
    assert!(listing(&d).is_empty(), "the probe is removed");
    let f = d.join("fig");
    let e = check_distinct_outputs(&[
        ("--json", Some(&f)),
        ("--plot", Some(&d.join(".").join("fig"))),
    ])
    .unwrap_err();
    assert!(matches!(e, OutputError::SameOutput { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("--json") && msg.contains("--plot"), "{msg}");
    check_distinct_outputs(&[("--json", Some(&f)), ("--plot", None)]).unwrap();
    check_distinct_outputs(&[("--json", Some(&f)), ("--plot", Some(&d.join("g")))]).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}
