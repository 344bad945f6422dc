//! Golden files: the expected text of a test written out in full in a file beside the test.

use std::path::Path;

/// Compares `actual` with the golden file `<dir>/<name>.txt`, the expected text written out in
/// full (offsets included: never derived from the code under test's output). `regenerate` is
/// the command that rewrites the files, named in a failure.
///
/// With `UPDATE_GOLDEN=1` in the environment the file is written instead; review the diff of
/// the folder before committing. A mismatch fails with both texts and the first differing line.
pub fn golden(dir: &Path, name: &str, actual: &str, regenerate: &str) {
    let path = dir.join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        std::fs::write(&path, actual)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "golden file {} cannot be read ({e}); create it with UPDATE_GOLDEN=1 {regenerate}",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the output at line {}:\n--- expected\n{expected}--- actual\n{actual}\
             (if the change is intended: UPDATE_GOLDEN=1 {regenerate}, then review the diff)",
            path.display(),
            first + 1
        );
    }
}
