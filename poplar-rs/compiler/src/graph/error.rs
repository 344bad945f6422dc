//! Errors while building a graph, and how errors name a vertex (`VertexName`) and suggest a
//! near miss (`nearest_name`).

use crate::dtype::DType;
use crate::target::TileId;

/// Errors while building a graph.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A tensor view (slice, reshape, …) that does not fit its tensor.
    #[error("invalid {op}: {reason}")]
    BadView { op: &'static str, reason: String },
    /// A tensor or id of another graph.
    #[error("{what} belongs to another graph")]
    ForeignTensor { what: String },
    /// A handle (vertex, compute set, function, stream) of another graph.
    #[error("{what} belongs to another graph")]
    ForeignHandle { what: String },
    /// A handle whose entity does not exist in this graph.
    #[error("{what} does not exist (the graph has {count})")]
    UnknownHandle { what: String, count: usize },
    /// A tile beyond the target.
    #[error("{what}: tile {tile} is out of range (target has {num_tiles} tiles)")]
    TileOutOfRange {
        what: String,
        tile: TileId,
        num_tiles: u32,
    },
    /// Host data of the wrong length.
    #[error("{what}: expected {expected} elements of {dtype}, got {got}")]
    BadData {
        what: String,
        dtype: DType,
        expected: usize,
        got: usize,
    },
    /// A host handle or stream name used twice.
    #[error("name '{name}' is already used by another {kind}")]
    DuplicateName { kind: &'static str, name: String },
    /// The graph's target is outside the chip model.
    #[error("invalid target: {0}")]
    BadTarget(#[from] crate::target::TargetError),
    /// A remote buffer that cannot exist (no rows, no such chip, larger than Streaming
    /// Memory).
    #[error("remote buffer '{name}': {reason}")]
    BadRemoteBuffer { name: String, reason: String },
    /// A replicated graph asked for an impossible replication (the reason names the figure).
    #[error("invalid replication: {reason}")]
    InvalidReplication { reason: String },
}

/// A vertex as errors name it: its number in the graph, its codelet, its compute set and its
/// tile, so that a message can be acted on without counting vertices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexName {
    /// The vertex's number in its graph (order of `add_vertex`).
    pub id: u32,
    /// The codelet it instantiates (as registered, e.g. `Mul<float>`).
    pub codelet: String,
    /// The name of its compute set.
    pub compute_set: String,
    /// Its tile, if mapped.
    pub tile: Option<TileId>,
}

impl std::fmt::Display for VertexName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "vertex {} ({}) in compute set '{}'",
            self.id, self.codelet, self.compute_set
        )?;
        match self.tile {
            Some(t) => write!(f, " on tile {t}"),
            None => write!(f, " (no tile)"),
        }
    }
}

/// The candidate nearest to `name` by edit distance, if it is near enough to be a likely typo
/// (at most a third of the name's length, and at least 1 edit, apart).
pub(crate) fn nearest_name<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    /// Edit distance with adjacent transpositions (optimal string alignment), ASCII case
    /// ignored: `inptu` is one edit from `input`.
    fn distance(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
        let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
        let w = b.len() + 1;
        let mut d = vec![0usize; (a.len() + 1) * w];
        for i in 0..=a.len() {
            for j in 0..=b.len() {
                d[i * w + j] = if i == 0 || j == 0 {
                    i + j
                } else {
                    let mut x = (d[(i - 1) * w + j - 1] + usize::from(a[i - 1] != b[j - 1]))
                        .min(d[(i - 1) * w + j] + 1)
                        .min(d[i * w + j - 1] + 1);
                    if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                        x = x.min(d[(i - 2) * w + j - 2] + 1);
                    }
                    x
                };
            }
        }
        d[a.len() * w + b.len()]
    }
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}
