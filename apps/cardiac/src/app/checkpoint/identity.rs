//! What a checkpoint belongs to ([`Identity`]), and the first difference from the run being
//! started, named as the user gave it ([`Mismatch`]).

use super::*;

/// What a checkpoint belongs to. Resuming compares every field with the run being started and
/// refuses a difference, naming it ([`Mismatch`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The program and checkpoint format: `cardiac 0.1.0, checkpoint format 1`.
    pub program: String,
    /// The options that decide the simulation and its records (the problem as results.json
    /// records it, the end time, traced points and their interval, the snapshot interval).
    pub options: serde_json::Value,
    /// CRC-32 of the options' JSON (hex).
    pub options_digest: String,
    /// CRC-32 of the set-up's cells (centroids, cell models, stimulus classes, the diffusion
    /// operator): the mesh and every file the options name (fibres, cell lists).
    pub mesh_digest: String,
    /// CRC-32 of the partition (the cells' device order and each tile's cells).
    pub partition_digest: String,
    /// The compiled executable's checksum (`Executable::checksum`).
    pub executable_checksum: u64,
}

/// This program: `cardiac <version>, checkpoint format <FORMAT>`.
pub fn program() -> String {
    format!(
        "cardiac {}, checkpoint format {FORMAT}",
        env!("CARGO_PKG_VERSION")
    )
}

pub(super) fn crc_hex(parts: &[&[u8]]) -> String {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    format!("{:08x}", h.finalize())
}

pub(super) fn f32_bytes(x: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; 4 * x.len()];
    put_f32(&mut out, x);
    out
}

/// `x` as little-endian bytes into `out` (exactly `4 * x.len()` long).
pub(super) fn put_f32(out: &mut [u8], x: &[f32]) {
    for (o, v) in out.chunks_exact_mut(4).zip(x) {
        o.copy_from_slice(&v.to_le_bytes());
    }
}

impl Identity {
    /// The identity of a run: `options` (JSON), its set-up, run info and executable checksum.
    pub fn new(
        options: serde_json::Value,
        setup: &Setup,
        info: &RunInfo,
        executable_checksum: u64,
    ) -> Identity {
        let options_digest = crc_hex(&[options.to_string().as_bytes()]);
        let mut centroids = Vec::with_capacity(24 * setup.centroids.len());
        for x in setup.centroids.iter().flatten() {
            centroids.extend_from_slice(&x.to_le_bytes());
        }
        let mut cols = Vec::with_capacity(4 * setup.ell.cols.len());
        for c in &setup.ell.cols {
            cols.extend_from_slice(&c.to_le_bytes());
        }
        let mesh_digest = crc_hex(&[
            &(setup.n as u64).to_le_bytes(),
            &centroids,
            &setup.cell_model,
            &setup.stim_class,
            &f32_bytes(&setup.ell.diag),
            &f32_bytes(&setup.ell.values),
            &cols,
        ]);
        let mut order = Vec::with_capacity(4 * info.new_to_old.len());
        for c in &info.new_to_old {
            order.extend_from_slice(&c.to_le_bytes());
        }
        let tiles: Vec<u8> = info
            .tile_cells
            .iter()
            .flat_map(|r| [r.start as u64, r.end as u64])
            .flat_map(u64::to_le_bytes)
            .collect();
        Identity {
            program: program(),
            options,
            options_digest,
            mesh_digest,
            partition_digest: crc_hex(&[&order, &tiles]),
            executable_checksum,
        }
    }

    /// The first difference between the checkpoint's identity (`self`) and `now`'s, in the
    /// order a user would look for it: program, options, mesh, partition, executable.
    pub fn mismatch(&self, now: &Identity) -> Option<Mismatch> {
        if self.program != now.program {
            return Some(Mismatch::Program {
                was: self.program.clone(),
                now: now.program.clone(),
            });
        }
        if let Some((key, was, is)) = first_difference("", &self.options, &now.options) {
            return Some(Mismatch::Option {
                option: option_name(&key),
                was,
                now: is,
            });
        }
        if self.mesh_digest != now.mesh_digest {
            return Some(Mismatch::Mesh);
        }
        if self.partition_digest != now.partition_digest {
            return Some(Mismatch::Partition);
        }
        if self.executable_checksum != now.executable_checksum {
            return Some(Mismatch::Executable {
                was: self.executable_checksum,
                now: now.executable_checksum,
            });
        }
        None
    }
}

/// How a checkpoint differs from the run that would resume it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    #[error("it was written by {was}; this is {now}: resume it with the program that wrote it")]
    Program { was: String, now: String },
    #[error("its run had {option} {was}; this one has {now}: resume with the options of the interrupted run")]
    Option {
        option: String,
        was: String,
        now: String,
    },
    #[error("its mesh differs from this run's (the cells, their fibres, cell types or stimulus, or the diffusion operator): the mesh file or a file the options name has changed")]
    Mesh,
    #[error("its partition differs from this run's (METIS gave other parts: another METIS build or partitioning code)")]
    Partition,
    #[error("its compiled executable (checksum {was:#018x}) differs from this run's ({now:#018x}): another version of the program or of the framework")]
    Executable { was: u64, now: u64 },
}

/// The first place where two JSON values differ: (path, was, now).
pub(super) fn first_difference(
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    if a == b {
        return None;
    }
    if let (Value::Object(x), Value::Object(y)) = (a, b) {
        let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let sub = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            let (va, vb) = (
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
            );
            if let Some(d) = first_difference(&sub, va, vb) {
                return Some(d);
            }
        }
    }
    Some((path.to_string(), a.to_string(), b.to_string()))
}

/// The command-line option of an options path (`problem.stim_density` → `--stim-amplitude`).
pub(super) fn option_name(path: &str) -> String {
    let field = path.strip_prefix("problem.").unwrap_or(path);
    let field = field.split('.').next().unwrap_or(field);
    match field {
        "stim" => "the stimulus region (--stim-box, --stim-sphere, --stim-surface, --stim-cells)"
            .to_string(),
        "stim_density" => "--stim-amplitude".to_string(),
        "sites" => "--stim-site".to_string(),
        "regions" => "--region".to_string(),
        "trace_points" => "--trace-point".to_string(),
        other => format!("--{}", other.replace('_', "-")),
    }
}
