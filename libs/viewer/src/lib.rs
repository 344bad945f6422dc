//! A graph and execution viewer in the browser: one self-contained HTML file showing a compiled
//! executable (memory per tile, program tree, liveness) and, with a profile, its execution
//! (phase timeline, cycles per label and phase, exchange matrices).
//!
//! The file needs no server and no network: the page's script and style are inlined, and no
//! third-party library is used (the charts are drawn on canvases by `assets/viewer.js`). The
//! data are embedded as JSON ([`ReportData`], described in `docs/viewer.md`), built from the
//! same functions as `poplar memory` and `poplar profile`.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let exe = poplar_exe::Executable::load_unlinked("model.exe")?;
//! let profile = poplar_exe::profile::Profile::load("profile.json")?;
//! let data = poplar_viewer::ReportData::from_executable(&exe, "model").with_profile(&profile)?;
//! poplar_viewer::write(std::path::Path::new("report.html"), &data, false)?;
//! # Ok(()) }
//! ```

#[cfg(feature = "browser")]
pub mod browser;
pub mod compare;
pub mod data;
pub mod liveness;

use std::path::{Path, PathBuf};

pub use compare::{CompareData, CompareError, Comparison, COMPARE_VERSION};
pub use data::{ReportData, REPORT_VERSION};

const TEMPLATE: &str = include_str!("../assets/viewer.html");
const STYLE: &str = include_str!("../assets/viewer.css");
const SCRIPT: &str = include_str!("../assets/viewer.js");

/// What can go wrong making a report; each names the file or the thing at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The profile is not of this executable.
    #[error("the profile does not belong to this executable: {what}")]
    ProfileMismatch { what: String },
    /// The output exists and overwriting was not asked for.
    #[error("{}: exists; give --force to replace it, or another output", path.display())]
    Exists { path: PathBuf },
    /// The output would replace one of the report's own inputs.
    #[error("{}: is an input of this report; choose another output", path.display())]
    OutputIsInput { path: PathBuf },
    /// A page that is not a report of this version.
    #[error("not a poplar report: {what}")]
    NotAReport { what: String },
    /// The output's folder is missing or takes no files (app-support's output rule).
    #[error(transparent)]
    Output(app_support::output::OutputError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The report as one HTML document.
pub fn html(data: &ReportData) -> String {
    page(&data.title, data)
}

/// The comparison of two reports as one HTML document: the viewer in compare mode (both
/// reports' data embedded, and their differences).
pub fn html_compare(data: &CompareData) -> String {
    page(&data.title, data)
}

/// The page with `data` embedded in its report-data element.
fn page(title: &str, data: &impl serde::Serialize) -> String {
    // `<` only occurs inside JSON strings, where `\u003c` means the same: the data can then
    // never close its <script> element.
    let json = serde_json::to_string(data)
        .expect("report data serialize")
        .replace('<', "\\u003c");
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + json.len());
    let mut rest = TEMPLATE;
    for (marker, value) in [
        ("{{TITLE}}", escape_html(title)),
        ("{{STYLE}}", STYLE.to_string()),
        ("{{DATA}}", json),
        ("{{SCRIPT}}", SCRIPT.to_string()),
    ] {
        let at = rest
            .find(marker)
            .expect("the template holds every marker once");
        out.push_str(&rest[..at]);
        out.push_str(&value);
        rest = &rest[at + marker.len()..];
    }
    out.push_str(rest);
    out
}

const DATA_OPEN: &str = "<script id=\"report-data\" type=\"application/json\">";

/// The data embedded in a report page written by [`html`]: to read a report's numbers back
/// (in tests, or to compare two reports) without a browser.
pub fn embedded(page: &str) -> Result<ReportData, ReportError> {
    embedded_json(page)
}

/// The data embedded in a comparison page written by [`html_compare`].
pub fn embedded_compare(page: &str) -> Result<CompareData, ReportError> {
    embedded_json(page)
}

fn embedded_json<T: serde::de::DeserializeOwned>(page: &str) -> Result<T, ReportError> {
    let bad = |what: &str| ReportError::NotAReport {
        what: what.to_string(),
    };
    let at = page
        .find(DATA_OPEN)
        .ok_or_else(|| bad("no report-data element"))?
        + DATA_OPEN.len();
    let end = at
        + page[at..]
            .find("</script>")
            .ok_or_else(|| bad("the report-data element is not closed"))?;
    serde_json::from_str(&page[at..end]).map_err(|e| bad(&format!("its data do not parse: {e}")))
}

/// Writes the report to `path`, atomically (app-support's `write_atomic`: a temporary file
/// beside it, synced, then renamed), refusing to replace an existing file unless `force`, and
/// never replacing one of `inputs` (the same file by device and inode: another spelling, a
/// symbolic or a hard link).
pub fn write_checked(
    path: &Path,
    data: &ReportData,
    force: bool,
    inputs: &[&Path],
) -> Result<(), ReportError> {
    write_page(path, || html(data), force, inputs)
}

/// [`write_checked`] for a comparison page ([`html_compare`]).
pub fn write_compare_checked(
    path: &Path,
    data: &CompareData,
    force: bool,
    inputs: &[&Path],
) -> Result<(), ReportError> {
    write_page(path, || html_compare(data), force, inputs)
}

/// The output rule of [`write_checked`], alone: to refuse an output before any work.
pub fn check_output(path: &Path, force: bool, inputs: &[&Path]) -> Result<(), ReportError> {
    if inputs
        .iter()
        .any(|i| app_support::output::same_file(path, i))
    {
        return Err(ReportError::OutputIsInput { path: path.into() });
    }
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(ReportError::Exists { path: path.into() });
    }
    // Its folder exists and takes files: checked now, not after the work.
    app_support::output::check_output_file(path, true, &[]).map_err(ReportError::Output)
}

/// Checks the output rule, then writes the page made by `page` atomically.
fn write_page(
    path: &Path,
    page: impl FnOnce() -> String,
    force: bool,
    inputs: &[&Path],
) -> Result<(), ReportError> {
    check_output(path, force, inputs)?;
    app_support::output::write_atomic(path, page()).map_err(|e| ReportError::Io {
        path: path.into(),
        source: match e {
            app_support::output::OutputError::Write { source, .. } => source,
            other => std::io::Error::other(other.to_string()),
        },
    })
}

/// [`write_checked`] with no inputs to protect.
pub fn write(path: &Path, data: &ReportData, force: bool) -> Result<(), ReportError> {
    write_checked(path, data, force, &[])
}
