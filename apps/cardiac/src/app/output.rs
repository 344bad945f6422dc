//! The output folder of a run and the one way `cardiac run` and `cardiac exec` write into it
//! ([`ResultWriter`]): checked (and created) before any work starts, so that a bad `--out`
//! never loses a finished simulation, locked for the run, never overwriting an earlier run's
//! files unless asked (`--force`), and every file written atomically. What the files hold:
//! voltage snapshots, traces, per-beat maps and `activation.vtu`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use app_support::output::{write_atomic_with, OutputLock, RunFiles};

use crate::mesh::TetMesh;
use crate::solver::device::DeviceRun;
use crate::solver::Results;

/// Files a run writes (and would overwrite) in its output folder, voltage snapshots
/// (`voltage_<t>ms.vtu`) included.
pub const RESULT_FILES: RunFiles = RunFiles::new(&[
    "activation.vtu",
    "results.json",
    "profile.json",
    "report.html",
    "traces.csv",
    "voltage.pvd",
    "ecg.csv",
    "ecg.png",
])
.with_series(&[("voltage_", "ms.vtu")]);

/// V over time at chosen points (`--trace-point`), sampled after every device run, written as
/// `traces.csv` (a column per point, named with its coordinates and the cell nearest to it).
pub struct Traces {
    points: Vec<([f64; 3], usize)>,
    rows: Vec<(f64, Vec<f32>)>,
}

impl Traces {
    /// Traces at `points` (mm), each read at the cell whose centroid is nearest.
    pub fn new(points: &[[f64; 3]], setup: &crate::solver::Setup) -> Traces {
        Traces {
            points: points.iter().map(|&p| (p, setup.nearest_cell(p))).collect(),
            rows: Vec::new(),
        }
    }

    /// Whether any point is traced.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Records V at the points (call after every device run, and once before the first).
    pub fn record(&mut self, t: f64, v: &[f32]) {
        if self.points.is_empty() {
            return;
        }
        self.rows
            .push((t, self.points.iter().map(|&(_, c)| v[c]).collect()));
    }

    /// The rows recorded so far: time (ms) and V (mV) at each point (for a checkpoint).
    pub fn rows(&self) -> &[(f64, Vec<f32>)] {
        &self.rows
    }

    /// Replaces the rows recorded so far by those of a checkpoint ([`Traces::rows`]); each
    /// row must have one value per point.
    pub fn restore_rows(&mut self, rows: Vec<(f64, Vec<f32>)>) -> Result<()> {
        if let Some((t, r)) = rows.iter().find(|(_, r)| r.len() != self.points.len()) {
            anyhow::bail!(
                "the checkpoint's trace row at {t} ms has {} values for {} traced points",
                r.len(),
                self.points.len()
            );
        }
        self.rows = rows;
        Ok(())
    }

    /// `traces.csv`: a row per sample, a column per point (`None` if no point is traced).
    pub fn to_csv(&self) -> Option<String> {
        use std::fmt::Write as _;
        if self.points.is_empty() {
            return None;
        }
        let mut out = String::from("t_ms");
        for (p, c) in &self.points {
            let _ = write!(out, ",v_mV at ({} {} {}) mm cell {c}", p[0], p[1], p[2]);
        }
        out.push('\n');
        for (t, vs) in &self.rows {
            let _ = write!(out, "{t:.4}");
            for v in vs {
                let _ = write!(out, ",{v}");
            }
            out.push('\n');
        }
        Some(out)
    }
}

/// The output folder of a run, and the one way a run writes its results there:
///
/// - [`prepare`](Self::prepare) checks `dir` before any work ([`RunFiles::prepare`]): creates
///   it if missing, refuses a path that is a file or a folder that cannot be written, or one
///   that another run is writing into (naming it); then refuses a folder holding files of an
///   earlier run (naming them) unless `force`, which removes them. The folder stays locked
///   until the writer is dropped;
/// - every file goes through it, named among [`RESULT_FILES`] (so that the next run's check
///   and `--force` know it), written atomically (a temporary file beside it, synced, renamed:
///   complete or absent under its name) by rank 0 of an MPI job (the other ranks write
///   nothing; their readings, which are collective, happen before).
#[derive(Debug)]
pub struct ResultWriter {
    dir: PathBuf,
    /// Rank 0's lock of the folder, held until the writer is dropped.
    _lock: Option<OutputLock>,
}

impl ResultWriter {
    /// Checks and locks `dir` for a run (rank 0 checks; its verdict is every rank's).
    pub fn prepare(dir: &Path, force: bool) -> Result<ResultWriter> {
        ResultWriter::prepare_files(dir, force, RESULT_FILES)
    }

    /// [`prepare`](Self::prepare) for a run resumed from a checkpoint into `dir`, the
    /// interrupted run's folder: its voltage snapshots are that run's and stay (the resumed
    /// run lists them in `voltage.pvd`, and rewrites those after the checkpoint identically);
    /// the files a run writes at its end are refused (the run finished) unless `force`,
    /// which removes them.
    pub fn prepare_resume(dir: &Path, force: bool) -> Result<ResultWriter> {
        ResultWriter::prepare_files(dir, force, RunFiles::new(RESULT_FILES.names()))
    }

    fn prepare_files(dir: &Path, force: bool, files: RunFiles) -> Result<ResultWriter> {
        let mut lock = None;
        let verdict = if poplar::dist::is_root() {
            files.prepare(dir, force).map(|l| lock = Some(l))
        } else {
            Ok(())
        };
        poplar::dist::agree(verdict.map_err(|e| format!("{e:#}")))?;
        Ok(ResultWriter {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The output folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `name` goes, on rank 0 (`None` on the others); an error for a name that is not
    /// one of the run's files.
    fn target(&self, name: &str) -> Result<Option<PathBuf>> {
        if !RESULT_FILES.contains(name) {
            bail!("{name} is not one of the files a run writes (RESULT_FILES)");
        }
        Ok(poplar::dist::is_root().then(|| self.dir.join(name)))
    }

    /// Writes `name` with `contents`.
    pub fn text(&self, name: &str, contents: impl AsRef<[u8]>) -> Result<()> {
        self.with(name, |w| std::io::Write::write_all(w, contents.as_ref()))
    }

    /// Writes `name` through `write`, which fills the temporary file.
    pub fn with(
        &self,
        name: &str,
        write: impl FnOnce(&mut app_support::output::AtomicFile) -> std::io::Result<()>,
    ) -> Result<()> {
        if let Some(path) = self.target(name)? {
            write_atomic_with(&path, write)?;
        }
        Ok(())
    }

    /// Writes `name` as a VTU file of `mesh` with per-cell arrays.
    /// ([`crate::mesh::write_vtu`], atomic as the others).
    pub fn vtu(&self, name: &str, mesh: &TetMesh, cells: &[(&str, &[f32])]) -> Result<()> {
        match self.target(name)? {
            Some(path) => crate::mesh::write_vtu(&path, mesh, cells)
                .with_context(|| format!("writing {}", path.display())),
            None => Ok(()),
        }
    }

    /// Writes `name` by a library that writes by path (a plot), which makes its own temporary
    /// file beside the target and renames it ([`app_support::output::AtomicPath`]).
    pub fn drawn(&self, name: &str, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        match self.target(name)? {
            Some(path) => draw(&path),
            None => Ok(()),
        }
    }
}

/// Voltage snapshots of a run: `voltage_<t>ms.vtu` files and the `voltage.pvd` collection
/// that gives ParaView their times, written through the run's [`ResultWriter`].
pub struct Snapshots {
    /// ms between snapshots; 0 = none.
    every: f64,
    next: f64,
    written: Vec<(f64, String)>,
}

impl Snapshots {
    /// Snapshots every `every` ms (0: none).
    pub fn new(every: f64) -> Self {
        Snapshots {
            every,
            next: every,
            written: Vec::new(),
        }
    }

    /// Called after every device run: writes a snapshot into `out` when one is due.
    pub fn after_chunk(
        &mut self,
        run: &DeviceRun,
        mesh: &TetMesh,
        out: &ResultWriter,
    ) -> Result<()> {
        // Nominal time (steps × dt): the device's f32 clock drifts by a few µs over a run.
        let t = run.steps() as f64 * f64::from(run.info.dt_ode);
        // Half an ODE step of slack for the rounding of the product.
        let slack = 0.5 * f64::from(run.info.dt_ode);
        if self.every <= 0.0 || t + slack < self.next {
            return Ok(());
        }
        while self.next <= t + slack {
            self.next += self.every;
        }
        // Every rank reads (a collective read in an MPI job); rank 0 writes.
        let v = run.voltage()?;
        let name = format!("voltage_{t:09.3}ms.vtu");
        out.vtu(&name, mesh, &[("v_mV", &v)])?;
        self.written.push((t, name));
        Ok(())
    }

    /// Where the schedule stands: the next snapshot's time and the snapshots written, for a
    /// checkpoint.
    pub fn schedule(&self) -> SnapshotSchedule {
        SnapshotSchedule {
            next: self.next,
            written: self.written.clone(),
        }
    }

    /// Continues the schedule of a checkpoint ([`Snapshots::schedule`]): the snapshots it
    /// lists must be in `dir`, the output folder, which is the interrupted run's, each whole
    /// ([`check_snapshot`]: a VTU file of `mesh`, complete to its last line, and all of one
    /// size, as a run writes them), since the resumed run lists them in `voltage.pvd` again.
    pub fn restore(&mut self, s: SnapshotSchedule, dir: &Path, mesh: &TetMesh) -> Result<()> {
        if poplar::dist::is_root() {
            let mut size = None;
            for (_, name) in &s.written {
                let path = dir.join(name);
                if !path.is_file() {
                    anyhow::bail!(
                        "the checkpoint's run wrote the snapshot {name}, which is not in {}: \
                         resume into the output folder of the interrupted run (--out)",
                        dir.display()
                    );
                }
                let len = check_snapshot(&path, mesh).with_context(|| {
                    format!(
                        "the checkpoint's run wrote the snapshot {}, which is damaged: restore \
                         it, or start the run again",
                        path.display()
                    )
                })?;
                match size {
                    Some((first, n)) if n != len => anyhow::bail!(
                        "the snapshot {} is {len} bytes, {} of the same run {n}: one of them \
                         is damaged (snapshots of a run are all of one size); restore it, or \
                         start the run again",
                        path.display(),
                        dir.join(first).display()
                    ),
                    Some(_) => {}
                    None => size = Some((name.as_str(), len)),
                }
            }
        }
        self.next = s.next;
        self.written = s.written;
        Ok(())
    }

    /// `voltage.pvd` listing the snapshots (`None`: none written).
    pub fn to_pvd(&self) -> Option<String> {
        if self.written.is_empty() {
            return None;
        }
        let mut pvd = String::from(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n",
        );
        for (t, name) in &self.written {
            pvd.push_str(&format!(
                "    <DataSet timestep=\"{t:.4}\" part=\"0\" file=\"{name}\"/>\n"
            ));
        }
        pvd.push_str("  </Collection>\n</VTKFile>\n");
        Some(pvd)
    }

    /// Writes `voltage.pvd` into `out` (none written: no file) and says so.
    pub fn finish(&self, out: &ResultWriter) -> Result<()> {
        let Some(pvd) = self.to_pvd() else {
            return Ok(());
        };
        out.text("voltage.pvd", pvd)?;
        crate::say!(
            "wrote {} voltage snapshots ({:.3} … {:.3} ms) and {}",
            self.written.len(),
            self.written[0].0,
            self.written[self.written.len() - 1].0,
            out.dir().join("voltage.pvd").display()
        );
        Ok(())
    }
}

/// Checks a voltage snapshot written by an earlier run of `mesh` without reading all of it:
/// a VTU file whose piece has the mesh's points and cells, and which ends with its closing
/// element (a file cut short does not). Returns its size.
pub fn check_snapshot(path: &Path, mesh: &TetMesh) -> Result<u64> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut f =
        app_support::input::open(path).with_context(|| format!("reading {}", path.display()))?;
    let len = f.metadata()?.len();
    let mut head = vec![0u8; 1024.min(len as usize)];
    f.read_exact(&mut head)?;
    let head = String::from_utf8_lossy(&head);
    let piece = format!(
        "<Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">",
        mesh.num_nodes(),
        mesh.num_cells()
    );
    anyhow::ensure!(
        head.starts_with("<?xml") && head.contains("<VTKFile type=\"UnstructuredGrid\""),
        "{} is not a VTU file ({len} bytes)",
        path.display()
    );
    const END: &[u8] = b"</VTKFile>\n";
    let mut tail = [0u8; END.len()];
    let complete = len >= (head.len() + END.len()) as u64
        && f.seek(SeekFrom::End(-(END.len() as i64))).is_ok()
        && f.read_exact(&mut tail).is_ok()
        && tail == END;
    anyhow::ensure!(
        complete,
        "{} is cut short ({len} bytes): it does not end with its closing element",
        path.display()
    );
    anyhow::ensure!(
        head.contains(&piece),
        "{} is not a snapshot of this mesh (its piece is not {piece})",
        path.display()
    );
    Ok(len)
}

/// The state of a run's snapshot schedule ([`Snapshots::schedule`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapshotSchedule {
    /// Time (ms) of the next snapshot.
    pub next: f64,
    /// (time in ms, file name) of each snapshot written.
    pub written: Vec<(f64, String)>,
}

/// `activation.vtu`: activation time and final voltage per cell, and the per-beat maps of a
/// paced run.
pub fn write_activation(
    out: &ResultWriter,
    mesh: &TetMesh,
    res: &Results,
    beats: Option<&Beats>,
) -> Result<()> {
    let maps = beats.map(Beats::maps).unwrap_or_default();
    let mut fields: Vec<(&str, &[f32])> =
        vec![("activation_ms", &res.activation), ("v_mV", &res.v)];
    for (name, data) in &maps {
        fields.push((name.as_str(), data));
    }
    out.vtu("activation.vtu", mesh, &fields)
}

/// Activation and repolarisation times per beat of a paced run, gathered between device runs
/// from the latest crossings (`DeviceRun::last_crossings`): a beat starts with a pulse (of any
/// site; pulses closer than `MERGE_MS` are one beat), an upstroke at `t` belongs to the last
/// beat started at or before `t`, so conduction must take less than the interval to the next
/// pulse; a repolarisation belongs to the beat of the upstroke before it. The device runs must
/// be shorter than an action potential (they are at most 250 ODE steps, 5 ms at the default
/// step).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Beats {
    /// Start of each beat (ms), rising.
    starts: Vec<f64>,
    /// `activation[beat][cell]`, -1 where the cell did not activate in that beat.
    pub activation: Vec<Vec<f32>>,
    /// `repolarisation[beat][cell]`, -1 where it did not repolarise (yet).
    pub repolarisation: Vec<Vec<f32>>,
}

/// Pulses that start within this many ms of a beat's first pulse belong to that beat.
pub const MERGE_MS: f64 = 10.0;

impl Beats {
    /// `beats` beats every `bcl` ms from `start`.
    pub fn new(beats: usize, n: usize, start: f64, bcl: f64) -> Beats {
        Beats::from_starts((0..beats).map(|k| start + k as f64 * bcl).collect(), n)
    }

    /// One beat per pulse start (in any order; starts within [`MERGE_MS`] are one beat).
    pub fn from_starts(mut starts: Vec<f64>, n: usize) -> Beats {
        starts.sort_by(f64::total_cmp);
        let mut merged: Vec<f64> = Vec::new();
        for s in starts {
            if merged.last().is_none_or(|&l| s - l >= MERGE_MS) {
                merged.push(s);
            }
        }
        if merged.is_empty() {
            merged.push(0.0);
        }
        let beats = merged.len();
        Beats {
            starts: merged,
            activation: vec![vec![-1.0; n]; beats],
            repolarisation: vec![vec![-1.0; n]; beats],
        }
    }

    /// Beat start times (ms).
    pub fn starts(&self) -> &[f64] {
        &self.starts
    }

    fn beat_of(&self, t: f32) -> usize {
        let t = f64::from(t);
        self.starts.partition_point(|&s| s <= t).saturating_sub(1)
    }

    /// Takes the latest crossings of every cell (mesh numbering).
    pub fn record(&mut self, last_up: &[f32], last_down: &[f32]) {
        for (i, (&up, &down)) in last_up.iter().zip(last_down).enumerate() {
            if up < 0.0 {
                continue;
            }
            let k = self.beat_of(up);
            if self.activation[k][i] < 0.0 {
                self.activation[k][i] = up;
            }
            if down > up && self.repolarisation[k][i] < 0.0 {
                self.repolarisation[k][i] = down;
            }
        }
    }

    /// Per beat: `activation_beat{k}_ms`, `repolarisation_beat{k}_ms` and `apd_beat{k}_ms`
    /// (repolarisation − activation; -1 where either is missing), beats from 1.
    pub fn maps(&self) -> Vec<(String, Vec<f32>)> {
        let mut out = Vec::new();
        for (k, (a, r)) in self.activation.iter().zip(&self.repolarisation).enumerate() {
            let apd: Vec<f32> = a
                .iter()
                .zip(r)
                .map(|(&a, &r)| if a >= 0.0 && r >= 0.0 { r - a } else { -1.0 })
                .collect();
            out.push((format!("activation_beat{}_ms", k + 1), a.clone()));
            out.push((format!("repolarisation_beat{}_ms", k + 1), r.clone()));
            out.push((format!("apd_beat{}_ms", k + 1), apd));
        }
        out
    }

    /// Per beat: cells activated, cells repolarised, and the median APD (ms) of those.
    pub fn summary(&self) -> Vec<(usize, usize, f64)> {
        self.activation
            .iter()
            .zip(&self.repolarisation)
            .map(|(a, r)| {
                let mut apd: Vec<f32> = a
                    .iter()
                    .zip(r)
                    .filter(|(&a, &r)| a >= 0.0 && r >= 0.0)
                    .map(|(&a, &r)| r - a)
                    .collect();
                apd.sort_by(f32::total_cmp);
                let med = apd.get(apd.len() / 2).map_or(f64::NAN, |&x| f64::from(x));
                (a.iter().filter(|&&x| x >= 0.0).count(), apd.len(), med)
            })
            .collect()
    }
}
