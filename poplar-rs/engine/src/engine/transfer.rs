//! Host stream copies: the bytes of a host-to-device stream into tile memory, and tile memory
//! gathered for a device-to-host stream, on one rank or over several. (Remote-buffer copies
//! are `remote.rs`'s; the interpreter, `run.rs`, times both for the profiler.)

use super::error::EngineError;
use super::exec::Exec;
use super::host::InStream;
use super::memory::gather_runs;
use crate::exe::MemRun;

/// A host-to-device copy of `stream` into `runs`: the next bytes of the connected buffer
/// (wrapping round).
pub(crate) fn stream_in(
    x: &Exec<'_>,
    inputs: &mut [Option<InStream>],
    stream: usize,
    runs: &[MemRun],
) -> Result<(), EngineError> {
    match x.dist {
        None => stream_in_here(x, inputs, stream, runs),
        Some(d) => stream_in_ranks(x, d, inputs, stream, runs),
    }
}

/// The bytes of `runs`, for a device-to-host copy.
pub(crate) fn stream_out(x: &Exec<'_>, runs: &[MemRun]) -> Vec<u8> {
    match x.dist {
        None => gather_runs(x.mem, runs),
        Some(d) => d.gather_runs(x.mem, runs),
    }
}

/// A host-to-device stream copy on one rank.
fn stream_in_here(
    x: &Exec<'_>,
    inputs: &mut [Option<InStream>],
    stream: usize,
    runs: &[MemRun],
) -> Result<(), EngineError> {
    let desc = &x.exe.streams[stream];
    let need: usize = runs.iter().map(|r| r.bytes as usize).sum();
    if need == 0 {
        return Ok(());
    }
    let Some(src) = inputs[stream].as_mut().filter(|s| !s.data.is_empty()) else {
        return Err(EngineError::StreamNotConnected {
            name: desc.name.clone(),
        });
    };
    debug_assert_eq!(src.dtype, desc.dtype);
    for r in runs {
        let mut off = r.offset as usize;
        let mut left = r.bytes as usize;
        while left > 0 {
            let n = left.min(src.data.len() - src.pos);
            // Runs in bounds and element-aligned: `check()` (BadRun, RunTotal).
            x.mem.write(r.tile, off, &src.data[src.pos..src.pos + n]);
            src.pos = (src.pos + n) % src.data.len();
            off += n;
            left -= n;
        }
    }
    Ok(())
}

/// A host-to-device stream over several ranks: rank 0 reads the connected buffer (it alone
/// decides whether it is connected) and scatters the bytes to the ranks that own the runs.
fn stream_in_ranks(
    x: &Exec<'_>,
    d: &super::ranks::Dist,
    inputs: &mut [Option<InStream>],
    stream: usize,
    runs: &[MemRun],
) -> Result<(), EngineError> {
    let need: usize = runs.iter().map(|r| r.bytes as usize).sum();
    if need == 0 {
        return Ok(());
    }
    let mut data = Vec::new();
    let result = if d.rank == 0 {
        match inputs[stream].as_mut().filter(|s| !s.data.is_empty()) {
            None => Err(EngineError::StreamNotConnected {
                name: x.exe.streams[stream].name.clone(),
            }),
            Some(src) => {
                data.reserve(need);
                while data.len() < need {
                    let n = (need - data.len()).min(src.data.len() - src.pos);
                    data.extend_from_slice(&src.data[src.pos..src.pos + n]);
                    src.pos = (src.pos + n) % src.data.len();
                }
                Ok(())
            }
        }
    } else {
        Ok(())
    };
    d.agree(result)?;
    d.scatter_runs(x.mem, runs, &data);
    Ok(())
}
