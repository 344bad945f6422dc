//! The constants of a [`Target`] that no measurement backs: what each is, its value, why it
//! is an assumption and what it moves, so that a profile can name the ones its time rests on
//! and a sensitivity study can vary them one at a time (`docs/cycle-model.md`, "Sensitivity").

use serde::Serialize;

use super::{Target, IPU_LINKS_PER_RAIL, IPU_LINK_BYTES_PER_SECOND};

/// A constant of the cycle model with no public measurement behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Assumed {
    /// `exchange_setup_cycles`: the fixed cycles of one exchange message.
    ExchangeSetup,
    /// The link efficiency folded into `link_bytes_per_cycle` (0.85 in the early IPUModel).
    LinkEfficiency,
    /// `link_hop_latency_cycles`.
    LinkHopLatency,
    /// `gw_hop_latency_cycles`.
    GwHopLatency,
    /// `internal_sync_cycles`.
    InternalSync,
    /// `global_sync_cycles` (the early IPUModel's sync latency on top of the internal sync).
    GlobalSync,
    /// `streaming_memory_bytes_per_cycle`: an upper bound from the PCIe link's width.
    StreamingMemoryRate,
    /// `streaming_memory_latency_cycles`.
    StreamingMemoryLatency,
    /// `host_round_trip_cycles`.
    HostRoundTrip,
}

/// What part of a run an assumed constant moves: a profile names the constant when its run
/// had some of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Moves {
    /// Every exchange message.
    Exchange,
    /// Exchanges that cross chips.
    InterChip,
    /// Exchanges that cross link domains (GW-Links).
    InterDomain,
    /// Internal syncs.
    InternalSync,
    /// Global syncs.
    GlobalSync,
    /// Transfers to and from Streaming Memory and the host.
    Transfer,
}

/// One assumed constant of a target, with its value there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assumption {
    /// Which constant.
    pub constant: Assumed,
    /// The `Target` field that holds it.
    pub field: &'static str,
    /// Its value in this target, in `unit`.
    pub value: f64,
    /// The unit of `value`.
    pub unit: &'static str,
    /// What it moves.
    pub moves: Moves,
    /// Where the value comes from and why it is an assumption.
    pub basis: &'static str,
}

impl Assumed {
    /// Every assumed constant, in the order of the docs' table.
    pub const ALL: [Assumed; 9] = [
        Assumed::ExchangeSetup,
        Assumed::LinkEfficiency,
        Assumed::LinkHopLatency,
        Assumed::GwHopLatency,
        Assumed::InternalSync,
        Assumed::GlobalSync,
        Assumed::StreamingMemoryRate,
        Assumed::StreamingMemoryLatency,
        Assumed::HostRoundTrip,
    ];

    /// The `Target` field that holds the constant.
    pub fn field(self) -> &'static str {
        match self {
            Assumed::ExchangeSetup => "exchange_setup_cycles",
            Assumed::LinkEfficiency => "link_bytes_per_cycle",
            Assumed::LinkHopLatency => "link_hop_latency_cycles",
            Assumed::GwHopLatency => "gw_hop_latency_cycles",
            Assumed::InternalSync => "internal_sync_cycles",
            Assumed::GlobalSync => "global_sync_cycles",
            Assumed::StreamingMemoryRate => "streaming_memory_bytes_per_cycle",
            Assumed::StreamingMemoryLatency => "streaming_memory_latency_cycles",
            Assumed::HostRoundTrip => "host_round_trip_cycles",
        }
    }

    /// A short name for tables ("link efficiency", "IPU-Link hop latency", ...).
    pub fn name(self) -> &'static str {
        match self {
            Assumed::ExchangeSetup => "exchange message set-up",
            Assumed::LinkEfficiency => "IPU-Link efficiency",
            Assumed::LinkHopLatency => "IPU-Link hop latency",
            Assumed::GwHopLatency => "GW hop latency",
            Assumed::InternalSync => "internal sync",
            Assumed::GlobalSync => "global sync",
            Assumed::StreamingMemoryRate => "Streaming Memory rate",
            Assumed::StreamingMemoryLatency => "Streaming Memory latency",
            Assumed::HostRoundTrip => "host round trip",
        }
    }

    /// What the constant moves.
    pub fn moves(self) -> Moves {
        match self {
            Assumed::ExchangeSetup => Moves::Exchange,
            Assumed::LinkEfficiency | Assumed::LinkHopLatency => Moves::InterChip,
            Assumed::GwHopLatency => Moves::InterDomain,
            Assumed::InternalSync => Moves::InternalSync,
            Assumed::GlobalSync => Moves::GlobalSync,
            Assumed::StreamingMemoryRate
            | Assumed::StreamingMemoryLatency
            | Assumed::HostRoundTrip => Moves::Transfer,
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Assumed::LinkEfficiency => "fraction of 16 GB/s per link",
            Assumed::StreamingMemoryRate => "bytes/cycle",
            _ => "cycles",
        }
    }

    fn basis(self) -> &'static str {
        match self {
            Assumed::ExchangeSetup => "no public figure",
            Assumed::LinkEfficiency => {
                "an early IPUModel parameter (graphcore/poplibs addGlobalExchangeConstraints), not a measurement"
            }
            Assumed::LinkHopLatency => "no public measurement (0.6 us at 1.33 GHz)",
            Assumed::GwHopLatency => "no public figure (2 us: gateway, switch, gateway)",
            Assumed::InternalSync => "no public figure",
            Assumed::GlobalSync => {
                "internal sync + the early IPUModel's 15 ns x 2 per hop, 1 + chips/4 hops (poplibs setGlobalSyncLatency): a model parameter, not a measurement"
            }
            Assumed::StreamingMemoryRate => {
                "PCIe Gen4 x8 to the gateway: an upper bound, no achieved figure published"
            }
            Assumed::StreamingMemoryLatency => "no public figure (1 us, a PCIe read round trip)",
            Assumed::HostRoundTrip => "no public figure (10 us, host callback and gateway)",
        }
    }
}

impl Target {
    /// The assumed constants of this target with their values here: every constant of the
    /// cycle model that no public measurement backs (`docs/cycle-model.md`, "Constants").
    pub fn assumptions(&self) -> Vec<Assumption> {
        Assumed::ALL
            .iter()
            .map(|&c| Assumption {
                constant: c,
                field: c.field(),
                value: self.assumed_value(c),
                unit: c.unit(),
                moves: c.moves(),
                basis: c.basis(),
            })
            .collect()
    }

    /// The value of an assumed constant in this target (the link efficiency as the fraction
    /// of [`IPU_LINKS_PER_RAIL`] links of 16 GB/s that `link_bytes_per_cycle` is).
    pub fn assumed_value(&self, c: Assumed) -> f64 {
        match c {
            Assumed::ExchangeSetup => f64::from(self.exchange_setup_cycles),
            Assumed::LinkEfficiency => {
                self.link_bytes_per_cycle * self.clock_hz
                    / (f64::from(IPU_LINKS_PER_RAIL) * IPU_LINK_BYTES_PER_SECOND)
            }
            Assumed::LinkHopLatency => f64::from(self.link_hop_latency_cycles),
            Assumed::GwHopLatency => f64::from(self.gw_hop_latency_cycles),
            Assumed::InternalSync => f64::from(self.internal_sync_cycles),
            Assumed::GlobalSync => f64::from(self.global_sync_cycles),
            Assumed::StreamingMemoryRate => self.streaming_memory_bytes_per_cycle,
            Assumed::StreamingMemoryLatency => f64::from(self.streaming_memory_latency_cycles),
            Assumed::HostRoundTrip => f64::from(self.host_round_trip_cycles),
        }
    }

    /// This target with one assumed constant multiplied by `factor` (cycle counts rounded to
    /// the nearest; the link efficiency scales `link_bytes_per_cycle`). A sensitivity study
    /// varies one at a time.
    pub fn with_scaled(&self, c: Assumed, factor: f64) -> Target {
        let cycles = |v: u32| {
            (f64::from(v) * factor)
                .round()
                .clamp(0.0, f64::from(u32::MAX)) as u32
        };
        let mut t = self.clone();
        match c {
            Assumed::ExchangeSetup => t.exchange_setup_cycles = cycles(t.exchange_setup_cycles),
            Assumed::LinkEfficiency => t.link_bytes_per_cycle *= factor,
            Assumed::LinkHopLatency => {
                t.link_hop_latency_cycles = cycles(t.link_hop_latency_cycles)
            }
            Assumed::GwHopLatency => t.gw_hop_latency_cycles = cycles(t.gw_hop_latency_cycles),
            Assumed::InternalSync => t.internal_sync_cycles = cycles(t.internal_sync_cycles),
            Assumed::GlobalSync => t.global_sync_cycles = cycles(t.global_sync_cycles),
            Assumed::StreamingMemoryRate => t.streaming_memory_bytes_per_cycle *= factor,
            Assumed::StreamingMemoryLatency => {
                t.streaming_memory_latency_cycles = cycles(t.streaming_memory_latency_cycles)
            }
            Assumed::HostRoundTrip => t.host_round_trip_cycles = cycles(t.host_round_trip_cycles),
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every assumed constant is listed once with the preset's value, and scaling one moves
    /// that field alone.
    #[test]
    fn assumptions_list_the_unmeasured_constants_and_scale_one_at_a_time() {
        let t = Target::pod16();
        let a = t.assumptions();
        assert_eq!(a.len(), Assumed::ALL.len());
        let value = |c: Assumed| a.iter().find(|x| x.constant == c).unwrap().value;
        assert!((value(Assumed::LinkEfficiency) - 0.85).abs() < 1e-12);
        assert_eq!(value(Assumed::LinkHopLatency), 800.0);
        assert_eq!(value(Assumed::ExchangeSetup), 16.0);
        // 150 + ceil(15 ns × 1.33 GHz × 2 × (1 + 16/4)) = 150 + ceil(199.5).
        assert_eq!(value(Assumed::GlobalSync), 350.0);
        for c in Assumed::ALL {
            let (half, double) = (t.with_scaled(c, 0.5), t.with_scaled(c, 2.0));
            let v = t.assumed_value(c);
            assert!(
                (half.assumed_value(c) - v / 2.0).abs() <= 0.5 + 1e-9,
                "{c:?}"
            );
            assert!((double.assumed_value(c) - 2.0 * v).abs() < 1e-9, "{c:?}");
            for other in Assumed::ALL.into_iter().filter(|&o| o != c) {
                assert_eq!(half.assumed_value(other), t.assumed_value(other), "{c:?}");
            }
            assert_eq!(half.validate(), Ok(()));
        }
    }
}
