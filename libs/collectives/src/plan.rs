//! What a collective will do, decided before any graph is built: the groups and their rings,
//! the method and the number of fragments. A [`Plan`] prints itself and is also written into
//! the program's label, so every choice is visible in the executable and its profiles.

use poplar_core::target::ChipTopology;
use poplar_core::target::Target;

use crate::CollectiveError;

/// The reduction operator (GCL's `CollectiveOperator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    /// The sum divided by the group size (float types only).
    Mean,
    Mul,
    Min,
    Max,
    LogicalAnd,
    LogicalOr,
    /// The sum of squares: every replica squares its data, then the results are added.
    SquareAdd,
    /// No reduction: each replica keeps its own data (all-reduce returns the input,
    /// reduce-scatter the replica's own fragment).
    Local,
}

impl Op {
    pub const ALL: [Op; 9] = [
        Op::Add,
        Op::Mean,
        Op::Mul,
        Op::Min,
        Op::Max,
        Op::LogicalAnd,
        Op::LogicalOr,
        Op::SquareAdd,
        Op::Local,
    ];

    /// The code the combining vertices use: 0 add, 1 mul, 2 min, 3 max, 4 and, 5 or.
    pub fn code(self) -> u32 {
        match self {
            Op::Add | Op::Mean | Op::SquareAdd | Op::Local => 0,
            Op::Mul => 1,
            Op::Min => 2,
            Op::Max => 3,
            Op::LogicalAnd => 4,
            Op::LogicalOr => 5,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "ADD",
            Op::Mean => "MEAN",
            Op::Mul => "MUL",
            Op::Min => "MIN",
            Op::Max => "MAX",
            Op::LogicalAnd => "LOGICAL_AND",
            Op::LogicalOr => "LOGICAL_OR",
            Op::SquareAdd => "SQUARE_ADD",
            Op::Local => "LOCAL",
        }
    }
}

/// Which replicas reduce together (GCL's `CommGroup`), over `R` replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// All replicas.
    All,
    /// Groups of `k` consecutive replicas: `{0..k-1}, {k..2k-1}, …`.
    Consecutive(u32),
    /// Groups of `k` replicas `R/k` apart: with `m = R/k`, `{0, m, 2m, …}, {1, m+1, …}, …`.
    Orthogonal(u32),
}

impl Group {
    /// The group size for `replicas`, or the typed error of an impossible group.
    pub fn size(self, replicas: u32) -> Result<u32, CollectiveError> {
        match self {
            Group::All => Ok(replicas),
            Group::Consecutive(k) | Group::Orthogonal(k) => {
                if k == 0 || !replicas.is_multiple_of(k) {
                    Err(CollectiveError::GroupSize {
                        group: self,
                        replicas,
                    })
                } else {
                    Ok(k)
                }
            }
        }
    }

    /// The members of every group, each in increasing replica order.
    pub fn members(self, replicas: u32) -> Result<Vec<Vec<u32>>, CollectiveError> {
        let k = self.size(replicas)?;
        Ok(match self {
            Group::All => vec![(0..replicas).collect()],
            Group::Consecutive(_) => (0..replicas / k)
                .map(|g| (g * k..(g + 1) * k).collect())
                .collect(),
            Group::Orthogonal(_) => {
                let m = replicas / k;
                (0..m)
                    .map(|j| (0..k).map(|i| j + i * m).collect())
                    .collect()
            }
        })
    }
}

/// How the fragments travel round the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Method {
    /// Chosen by [`Plan::auto_method`] (poplibs' rule; documented in `docs/collectives.md`).
    #[default]
    Auto,
    /// Each replica sends to the next in ring order: `G` fragments, `G − 1` steps.
    Clockwise,
    /// Each replica sends to the previous in ring order.
    Anticlockwise,
    /// Half of the data clockwise and half anticlockwise at once: `2G` fragments, `G − 1`
    /// steps of half the bytes each, both directions of every link busy.
    BidirectionalRingPair,
    /// Each fragment's partial results come from both sides and meet at its owner:
    /// `⌈(G−1)/2⌉` steps clockwise and `⌊(G−1)/2⌋` anticlockwise, in parallel.
    MeetInTheMiddle,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Clockwise => "clockwise",
            Method::Anticlockwise => "anticlockwise",
            Method::BidirectionalRingPair => "bidirectional ring pair",
            Method::MeetInTheMiddle => "meet in the middle",
        }
    }
}

/// The order in which the members of a group form a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RingOrder {
    /// [`RingOrder::Ladder`] for one chip per replica on a ladder, else
    /// [`RingOrder::Sequential`] (poplibs' choice).
    #[default]
    Auto,
    /// Members in replica order: on a torus, or with several chips per replica, neighbours in
    /// the order are neighbours on the links.
    Sequential,
    /// Up one rail of the ladder and down the other (0, 2, 4, 6, 7, 5, 3, 1 for eight): every
    /// hop of the ring, including the one that closes it, crosses one rung or one step.
    Ladder,
}

/// The kind of collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    AllReduce,
    ReduceScatter,
    AllGather,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::AllReduce => "allReduce",
            Kind::ReduceScatter => "reduceScatter",
            Kind::AllGather => "allGather",
        }
    }
}

/// Every choice of one collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub kind: Kind,
    pub op: Op,
    pub group: Group,
    pub replicas: u32,
    /// Replicas per group (`G`).
    pub group_size: u32,
    /// The ring of each group, as replica indices in ring order.
    pub rings: Vec<Vec<u32>>,
    pub ring_order: RingOrder,
    pub method: Method,
    /// Fragments the data is cut into (`G`, or `2G` for the bidirectional ring pair).
    pub fragments: u32,
    /// Elements reduced per replica (all tensors of the call) and their element size.
    pub elements: u64,
    pub element_bytes: u32,
    /// Cross-replica exchange steps.
    pub steps: u32,
    /// Tiles of a replica that hold a share of every fragment.
    pub tiles: u32,
}

impl Plan {
    /// poplibs' automatic choice (`anchors/collectives.md`): clockwise with more than one chip
    /// per replica or at most two replicas in the group; otherwise meet in the middle for
    /// small messages (thresholds on bytes per chip that grow with the group size, always
    /// beyond 16) and the bidirectional ring pair for large ones. All-gather uses half the
    /// byte thresholds.
    pub fn auto_method(
        kind: Kind,
        group_size: u32,
        chips_per_replica: u32,
        bytes_per_chip: u64,
    ) -> Method {
        if chips_per_replica > 1 || group_size <= 2 {
            return Method::Clockwise;
        }
        let div = if kind == Kind::AllGather { 2 } else { 1 };
        let small = bytes_per_chip < 1_245_184 / div
            || (group_size > 4 && bytes_per_chip < 4_980_736 / div)
            || (group_size > 8 && bytes_per_chip < 39_845_888 / div)
            || group_size > 16;
        if small {
            Method::MeetInTheMiddle
        } else {
            Method::BidirectionalRingPair
        }
    }

    /// The ring of one group's members under `order` on `machine`.
    pub fn ring(
        members: &[u32],
        order: RingOrder,
        machine: &Target,
        chips_per_replica: u32,
    ) -> (Vec<u32>, RingOrder) {
        let order = match order {
            RingOrder::Auto => {
                if chips_per_replica == 1
                    && machine.topology == ChipTopology::Ladder
                    && members.len() > 2
                {
                    RingOrder::Ladder
                } else {
                    RingOrder::Sequential
                }
            }
            o => o,
        };
        let ring = match order {
            RingOrder::Ladder => members
                .iter()
                .step_by(2)
                .chain(members.iter().skip(1).step_by(2).rev())
                .copied()
                .collect(),
            _ => members.to_vec(),
        };
        (ring, order)
    }

    /// One line: the label of the collective's program.
    pub fn label(&self, name: &str) -> String {
        let ring: Vec<String> = self.rings[0].iter().map(u32::to_string).collect();
        format!(
            "{}({name}) op={} group={:?} G={} method={} ring=[{}] order={:?} fragments={} steps={} elements={} tiles={}",
            self.kind.name(),
            self.op.name(),
            self.group,
            self.group_size,
            self.method.name(),
            ring.join(","),
            self.ring_order,
            self.fragments,
            self.steps,
            self.elements,
            self.tiles,
        )
    }
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} {} over {} replicas, {} group(s) of {}",
            self.kind.name(),
            self.op.name(),
            self.replicas,
            self.rings.len(),
            self.group_size
        )?;
        for r in &self.rings {
            writeln!(f, "  ring {r:?}")?;
        }
        writeln!(
            f,
            "  method {}, ring order {:?}, {} fragments, {} steps",
            self.method.name(),
            self.ring_order,
            self.fragments,
            self.steps
        )?;
        write!(
            f,
            "  {} elements of {} bytes per replica on {} tiles",
            self.elements, self.element_bytes, self.tiles
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_follow_gcl() {
        assert_eq!(
            Group::Consecutive(2).members(8).unwrap(),
            vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]
        );
        assert_eq!(
            Group::Orthogonal(4).members(8).unwrap(),
            vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]]
        );
        assert!(Group::Consecutive(3).members(8).is_err());
        assert!(Group::Orthogonal(0).members(8).is_err());
    }

    #[test]
    fn the_ladder_ring_goes_up_one_rail_and_down_the_other() {
        let t = poplar_core::target::Target::gc200_multi(8);
        let m: Vec<u32> = (0..8).collect();
        assert_eq!(
            Plan::ring(&m, RingOrder::Auto, &t, 1).0,
            vec![0, 2, 4, 6, 7, 5, 3, 1]
        );
        // Every hop of that ring, the closing one included, is one hop on the ladder.
        let ring = Plan::ring(&m, RingOrder::Auto, &t, 1).0;
        for i in 0..8 {
            assert_eq!(t.hops(ring[i], ring[(i + 1) % 8]), 1, "{ring:?} at {i}");
        }
        assert_eq!(Plan::ring(&m, RingOrder::Auto, &t, 2).0, m);
    }

    #[test]
    fn auto_method_follows_poplibs_thresholds() {
        use Kind::*;
        use Method::*;
        // (kind, group size, chips per replica, bytes per chip) -> method
        let cases = [
            (ReduceScatter, 8, 2, 1u64 << 30, Clockwise),
            (ReduceScatter, 2, 1, 1 << 30, Clockwise),
            (ReduceScatter, 4, 1, 1_000_000, MeetInTheMiddle),
            (ReduceScatter, 4, 1, 2_000_000, BidirectionalRingPair),
            (AllGather, 4, 1, 1_000_000, BidirectionalRingPair),
            (AllGather, 4, 1, 600_000, MeetInTheMiddle),
            (ReduceScatter, 16, 1, 30_000_000, MeetInTheMiddle),
            (ReduceScatter, 16, 1, 50_000_000, BidirectionalRingPair),
            (ReduceScatter, 32, 1, 1 << 40, MeetInTheMiddle),
        ];
        for (kind, g, c, bytes, want) in cases {
            assert_eq!(
                Plan::auto_method(kind, g, c, bytes),
                want,
                "{kind:?} G={g} chips={c} {bytes} B"
            );
        }
    }
}
