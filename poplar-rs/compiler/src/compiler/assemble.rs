//! The last step of the pipeline: the [`Executable`] assembled from the lowered program, the
//! tile images and the graph's host-facing tables (host tensors, streams, replica constants,
//! variable names). Nothing here decides anything; it only moves what the passes produced
//! into the executable's plain data.

use super::lower::Lowered;
use crate::exe::{
    Executable, HostTensor, RemoteBufferDesc, ReplicaConstant, Replication, StreamDesc, TileImage,
};
use crate::graph::{Graph, StreamDir};

/// The executable of `graph`, lowered into `lowered`, with tile images `tiles`.
pub(crate) fn executable(graph: &Graph, lowered: Lowered, tiles: Vec<TileImage>) -> Executable {
    let host_tensors = host_tensors(graph, &lowered);
    let replication = replication(graph, &lowered);
    Executable {
        target: graph.machine_target().clone(),
        replication,
        codelets: lowered.codelet_refs.into(),
        tiles,
        computes: lowered.computes.into(),
        exchanges: lowered.exchanges.into(),
        programs: lowered.programs,
        functions: lowered.functions.into(),
        host_tensors,
        streams: streams(graph),
        remote_buffers: graph
            .remote_buffers
            .values()
            .map(|b| RemoteBufferDesc {
                name: b.name.clone(),
                dtype: b.dtype,
                elements: b.elements,
                rows: b.rows,
                chip: b.chip,
            })
            .collect(),
        remote_copies: lowered.remote_copies.into(),
        variable_names: graph.vars.values().map(|v| v.name.clone()).collect(),
        app_sections: Default::default(),
    }
}

fn host_tensors(graph: &Graph, lowered: &Lowered) -> Vec<HostTensor> {
    graph
        .host_tensors
        .iter()
        .zip(&lowered.host_tensor_runs)
        .map(|((name, h), runs)| HostTensor {
            name: name.clone(),
            dtype: h.tensor.dtype,
            shape: h.tensor.shape.clone(),
            runs: runs.clone(),
            writable: h.writable,
            readable: h.readable,
        })
        .collect()
}

/// The replication record: the factor, the replica maps of cross-replica copies and each
/// replica constant's values per replica.
fn replication(graph: &Graph, lowered: &Lowered) -> Option<Replication> {
    let rep = graph.replication.as_ref()?;
    let constants = graph
        .replica_constants
        .iter()
        .zip(&lowered.replica_constant_runs)
        .map(|((var, bytes), runs)| {
            let per = bytes.len() / rep.factor as usize;
            ReplicaConstant {
                name: graph.vars[*var].name.clone(),
                runs: runs.clone(),
                values: (0..rep.factor as usize)
                    .map(|r| bytes[r * per..(r + 1) * per].to_vec())
                    .collect(),
            }
        })
        .collect();
    Some(Replication {
        factor: rep.factor,
        chips_per_replica: rep.chips_per_replica,
        maps: lowered.replica_maps.clone(),
        constants,
    })
}

fn streams(graph: &Graph) -> Vec<StreamDesc> {
    graph
        .streams
        .values()
        .map(|s| StreamDesc {
            name: s.name.clone(),
            dtype: s.dtype,
            len: s.len,
            buffering_depth: s.buffering_depth,
            dir: match s.dir {
                StreamDir::HostToDevice => crate::exe::StreamDir::HostToDevice,
                StreamDir::DeviceToHost => crate::exe::StreamDir::DeviceToHost,
            },
        })
        .collect()
}
