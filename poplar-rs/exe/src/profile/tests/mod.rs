//! Cycle model on hand-computed cases, and the recorder's replay against direct formulas.

use super::model::*;
use super::*;
use crate::exe::*;
use crate::target::{ChipTopology, Target};

/// The event of compute phase `i` (no host time).
fn compute(i: u32) -> RunEvent<'static> {
    RunEvent::Compute {
        phase: crate::exe::ComputePhaseId::from_u32(i),
        wall: Default::default(),
    }
}

/// The end of a run (no host time).
const END: RunEvent<'static> = RunEvent::RunEnd {
    wall: std::time::Duration::ZERO,
};

fn exe(target: Target) -> Executable {
    let n = target.num_tiles() as usize;
    Executable {
        target,
        replication: None,
        codelets: vec![
            CodeletRef {
                name: "single".into(),
                signature: String::new(),
                fields: vec![],
                multi_worker: false,
            },
            CodeletRef {
                name: "multi".into(),
                signature: String::new(),
                fields: vec![],
                multi_worker: true,
            },
        ]
        .into(),
        tiles: vec![TileImage::default(); n],
        computes: Default::default(),
        exchanges: Default::default(),
        programs: vec![],
        functions: Default::default(),
        host_tensors: vec![],
        streams: vec![],
        remote_buffers: Default::default(),
        remote_copies: Default::default(),
        variable_names: vec![],
        app_sections: Default::default(),
    }
}

fn v(cycles: u64, multi: bool) -> VertexInst {
    VertexInst {
        codelet: crate::exe::CodeletId::from_u32(u32::from(multi)),
        id: 0,
        fields: vec![],
        lists: vec![],
        cycles,
        cycles_estimated: true,
    }
}

fn tile(t: u32, vertices: Vec<VertexInst>) -> TileCompute {
    TileCompute {
        tile: t.into(),
        pre_copies: vec![],
        vertices,
        post_copies: vec![],
    }
}

fn phase(name: &str, tiles: Vec<TileCompute>) -> ComputePhase {
    ComputePhase {
        name: name.into(),
        tiles,
    }
}

fn xfer(src: u32, bytes: u32, dsts: &[u32]) -> Transfer {
    Transfer {
        src_tile: src.into(),
        src_offset: 0,
        bytes,
        dsts: dsts.iter().map(|&d| (d.into(), 0)).collect(),
    }
}

fn xphase(transfers: Vec<Transfer>) -> ExchangePhase {
    ExchangePhase {
        name: "x".into(),
        transfers,
        cross_replica: Vec::new(),
    }
}

// The barrel: six contexts issue in turn, so a context's `c` worker cycles take `6c` tile
// cycles whether the other contexts are busy or idle.

#[test]
fn one_vertex_alone_runs_at_a_sixth_of_the_issue_rate() {
    let e = exe(Target::custom(4, 1024));
    let c = compute_cost(&e, &phase("a", vec![tile(2, vec![v(100, false)])]));
    assert_eq!(c.max, 600);
    assert_eq!(c.tiles.len(), 1);
    assert_eq!(c.tiles[0].tile, 2);
    assert_eq!(c.tiles[0].cycles, 600);
    assert_eq!(c.tiles[0].worker_cycles, 100);
    assert_eq!(c.tiles[0].supervisor_cycles, 0);
    assert_eq!(c.default_estimates, 0);
}

#[test]
fn six_equal_vertices_take_as_long_as_one() {
    let e = exe(Target::custom(1, 1024));
    let six: Vec<_> = (0..6).map(|_| v(100, false)).collect();
    let c = compute_cost(&e, &phase("a", vec![tile(0, six)]));
    assert_eq!(c.max, 600);
    assert_eq!(c.tiles[0].worker_cycles, 600);
}

#[test]
fn a_seventh_vertex_waits_for_the_first_free_context() {
    let e = exe(Target::custom(1, 1024));
    let seven: Vec<_> = (0..7).map(|_| v(100, false)).collect();
    let c = compute_cost(&e, &phase("a", vec![tile(0, seven)]));
    assert_eq!(c.max, 1200);
    assert_eq!(c.tiles[0].worker_cycles, 700);
}

#[test]
fn mixed_vertices_go_to_the_first_free_context() {
    let e = exe(Target::custom(1, 1024));
    // 300 on context 0, 100 on contexts 1..=5, the last 100 on context 1 (free at 100):
    // the busiest context has 300 worker cycles.
    let mut mixed = vec![v(300, false)];
    mixed.extend((0..6).map(|_| v(100, false)));
    assert_eq!(
        compute_cost(&e, &phase("a", vec![tile(0, mixed)])).max,
        6 * 300
    );
}

#[test]
fn multi_worker_vertex_runs_on_every_context_plus_the_supervisor() {
    let e = exe(Target::custom(1, 1024));
    // The estimate is one context's share: 50 on all six, then the supervisor's 51.
    let c = compute_cost(&e, &phase("a", vec![tile(0, vec![v(50, true)])]));
    assert_eq!(c.max, 6 * 50 + SUPERVISOR_CYCLES);
    assert_eq!(c.tiles[0].worker_cycles, 300);
    assert_eq!(c.tiles[0].supervisor_cycles, SUPERVISOR_CYCLES);
    // After a 100-cycle vertex on context 0, the multi-worker vertex starts when every
    // context is free (at 100) and ends at 150 on all of them.
    let c = compute_cost(
        &e,
        &phase("a", vec![tile(0, vec![v(100, false), v(50, true)])]),
    );
    assert_eq!(c.max, 6 * 150 + SUPERVISOR_CYCLES);
    assert_eq!(c.tiles[0].worker_cycles, 400);
}

#[test]
fn a_six_worker_split_is_six_times_faster_than_one_worker() {
    let e = exe(Target::custom(1, 1024));
    let one = compute_cost(&e, &phase("a", vec![tile(0, vec![v(6000, false)])]));
    let six: Vec<_> = (0..6).map(|_| v(1000, false)).collect();
    let six = compute_cost(&e, &phase("a", vec![tile(0, six)]));
    assert_eq!(one.max, 36_000);
    assert_eq!(six.max, 6000);
}

#[test]
fn copies_and_default_estimates() {
    let e = exe(Target::custom(1, 1024));
    let mut t = tile(0, vec![v(10, false)]);
    t.pre_copies.push(LocalCopy {
        src: 0,
        dst: 64,
        bytes: 20,
    });
    t.post_copies.push(LocalCopy {
        src: 64,
        dst: 0,
        bytes: 8,
    });
    t.vertices[0].cycles_estimated = false;
    let c = compute_cost(&e, &phase("a", vec![t]));
    // (4 + ceil(20/8)) + 10 + (4 + 1)
    assert_eq!(c.tiles[0].copy_cycles, 7 + 5);
    assert_eq!(c.max, 6 * 10 + 7 + 5);
    assert_eq!(c.default_estimates, 1);
}

#[test]
fn one_broadcast() {
    let t = Target::custom(4, 1024);
    let c = exchange_cost(&t, &xphase(vec![xfer(0, 100, &[1, 2, 3])]));
    // setup 16 + ceil(100 / 4): sent once, received by each.
    assert_eq!(c.tiles.len(), 4);
    assert!(c.tiles.iter().all(|x| x.cycles == 41));
    assert_eq!(c.tiles[0].bytes_sent, 100);
    assert_eq!(c.tiles[0].recv_cycles, 0);
    assert_eq!(c.bytes, 100);
    assert_eq!(c.bytes_delivered, 300);
    assert_eq!(c.inter_chip_bytes, 0);
    // Two messages into one tile add up on the receive side.
    let c = exchange_cost(&t, &xphase(vec![xfer(0, 100, &[3]), xfer(1, 100, &[3])]));
    assert_eq!(c.tiles[2].tile, 3);
    assert_eq!(c.tiles[2].cycles, 82);
    assert_eq!(c.max, 82);
}

#[test]
fn two_chip_transfer() {
    let mut t = Target::gc200_multi(2);
    t.tiles_per_ipu = 4;
    let c = exchange_cost(&t, &xphase(vec![xfer(0, 100, &[5])]));
    // The tile's port: setup 16 + 100 / 4; the link (20.45 B/cycle) takes 5 cycles, less;
    // plus 1 hop x 800.
    assert_eq!(c.max, 16 + 25 + 800);
    assert!(c.tiles.iter().all(|x| x.cycles == 841));
    assert_eq!(c.inter_chip_bytes, 100);
    assert_eq!(c.links.len(), 1);
    assert_eq!(
        (
            c.links[0].src_chip,
            c.links[0].dst_chip,
            c.links[0].bytes,
            c.links[0].cycles
        ),
        (0, 1, 100, 5)
    );
    // Ladder of 8 chips: chip 0 to chip 7 is 4 hops; on a torus 1.
    let mut t8 = Target::gc200_multi(8);
    t8.tiles_per_ipu = 1;
    let c = exchange_cost(&t8, &xphase(vec![xfer(0, 10, &[7])]));
    assert_eq!(c.max, 16 + 3 + 4 * 800);
    t8.topology = ChipTopology::Torus;
    let c = exchange_cost(&t8, &xphase(vec![xfer(0, 10, &[7])]));
    assert_eq!(c.max, 16 + 3 + 800);
    // A broadcast to a local tile and two tiles of one remote chip leaves the tile once and
    // crosses the link once.
    let c = exchange_cost(&t, &xphase(vec![xfer(0, 100, &[1, 4, 5])]));
    assert_eq!(c.tiles[0].send_cycles, 41 + 800);
    assert_eq!(c.links[0].bytes, 100);
}

#[test]
fn tiles_sending_to_another_chip_share_its_links() {
    let mut t = Target::gc200_multi(2);
    t.tiles_per_ipu = 16;
    // Ten tiles of chip 0 each send 100 KB to their partner on chip 1: each port needs
    // 16 + 25,600 cycles, but the links carry 1,024,000 bytes at 2 links × 16 GB/s × 0.85
    // = 27.2 GB/s over 1.33 GHz (1,024,000 × 1.33 / 27.2 = 50,070.6, so 50,071 cycles).
    let xs: Vec<Transfer> = (0..10).map(|i| xfer(i, 102_400, &[16 + i])).collect();
    let c = exchange_cost(&t, &xphase(xs));
    let link = (1_024_000f64 / t.link_bytes_per_cycle).ceil() as u64;
    assert_eq!(link, 50_071);
    assert_eq!(c.links[0].cycles, link);
    assert!(
        c.tiles.iter().all(|x| x.cycles == link + 800),
        "{:?}",
        c.tiles
    );
    // One tile alone is limited by its own port.
    let c = exchange_cost(&t, &xphase(vec![xfer(0, 102_400, &[16])]));
    assert_eq!(c.max, 16 + 25_600 + 800);
    // Opposite directions use different links: no sharing.
    let c = exchange_cost(
        &t,
        &xphase(vec![xfer(0, 102_400, &[16]), xfer(17, 102_400, &[1])]),
    );
    assert_eq!(c.links.len(), 2);
    assert_eq!(c.max, 16 + 25_600 + 800);
}

#[test]
fn a_tiles_exchange_breaks_down_into_values_setups_link_wait_and_latency() {
    let mut t = Target::gc200_multi(2);
    t.tiles_per_ipu = 16;
    // Ten tiles of chip 0 send 100 KB each to a partner on chip 1: a receiver's port takes
    // 16 + 25,600 cycles, then it waits for the links (50,071 cycles for all ten), then 1 hop.
    let xs: Vec<Transfer> = (0..10).map(|i| xfer(i, 102_400, &[16 + i])).collect();
    let c = exchange_cost(&t, &xphase(xs.clone()));
    let r = c.tiles.iter().find(|x| x.tile == 16).unwrap();
    assert_eq!(
        r.breakdown,
        ExchangeBreakdown {
            receive: true,
            value_cycles: 25_600,
            setup_cycles: 16,
            messages: 1,
            link_wait_cycles: 50_071 - 25_616,
            latency_cycles: 800,
        }
    );
    assert_eq!((r.messages_sent, r.messages_received), (0, 1));
    // The model's text names the slowest tile (the lowest of equals) and its parts.
    let mut e = exe(t.clone());
    e.exchanges = vec![xphase(xs.clone())].into();
    let text = CycleModel::new(&e).text_summary();
    assert!(
        text.contains("exchange     0 tile      0 sends: 50871 = 25600 + 16 (1) + 24455 + 800"),
        "{text}"
    );
    // Every tile's parts add up to its cycles.
    assert!(c.tiles.iter().all(|x| x.breakdown.cycles() == x.cycles));
    // On one chip: a tile receiving two messages and sending a broadcast to three tiles.
    let c = exchange_cost(
        &t,
        &xphase(vec![
            xfer(0, 100, &[3]),
            xfer(1, 100, &[3]),
            xfer(3, 40, &[4, 5, 6]),
        ]),
    );
    let r = c.tiles.iter().find(|x| x.tile == 3).unwrap();
    assert_eq!((r.messages_sent, r.messages_received), (1, 2));
    assert_eq!(
        r.breakdown,
        ExchangeBreakdown {
            receive: true,
            value_cycles: 50,
            setup_cycles: 32,
            messages: 2,
            link_wait_cycles: 0,
            latency_cycles: 0,
        }
    );
    // A target whose hops have no latency still waits for its links.
    t.link_hop_latency_cycles = 0;
    let c = exchange_cost(&t, &xphase(xs));
    assert!(c.tiles.iter().all(|x| x.cycles == 50_071), "{:?}", c.tiles);
}

#[test]
fn a_tiles_breakdowns_over_phases_add_up_with_the_later_side() {
    let first = ExchangeBreakdown {
        receive: true,
        value_cycles: 100,
        setup_cycles: 32,
        messages: 2,
        link_wait_cycles: 5,
        latency_cycles: 800,
    };
    let later = ExchangeBreakdown {
        receive: false,
        value_cycles: 40,
        setup_cycles: 16,
        messages: 1,
        link_wait_cycles: 0,
        latency_cycles: 0,
    };
    let mut sum = first;
    sum += later;
    assert_eq!(
        sum,
        ExchangeBreakdown {
            receive: false,
            value_cycles: 140,
            setup_cycles: 48,
            messages: 3,
            link_wait_cycles: 5,
            latency_cycles: 800,
        }
    );
    assert_eq!(sum.cycles(), first.cycles() + later.cycles());
}

#[test]
fn even_ports_keep_each_tiles_waits_and_the_mean() {
    let b = |value, setup, wait, latency| ExchangeBreakdown {
        value_cycles: value,
        setup_cycles: setup,
        link_wait_cycles: wait,
        latency_cycles: latency,
        ..ExchangeBreakdown::default()
    };
    // Ports of 100 and 300 cycles over 3 tiles (mean 400 / 3); the second tile waits 100 for
    // links and 300 for hops. The tiles' mean is 800 / 3, the phase 400 / 3 + 400.
    let e = EvenPorts::of(&[b(84, 16, 0, 0), b(268, 32, 100, 300)], 3);
    assert_eq!(e.max_link_and_hop_cycles, 400);
    assert!((e.mean_port_cycles - 400.0 / 3.0).abs() < 1e-12);
    assert!((e.effectiveness - (800.0 / 3.0) / (400.0 / 3.0 + 400.0)).abs() < 1e-12);
    // Without links or hops, evening the ports makes the exchange fully effective.
    let one_chip = EvenPorts::of(&[b(84, 16, 0, 0), b(268, 32, 0, 0)], 2);
    assert_eq!(
        (one_chip.max_link_and_hop_cycles, one_chip.effectiveness),
        (0, 1.0)
    );
    assert_eq!(EvenPorts::of(&[], 4).effectiveness, 1.0);

    // A phase of the model: ten tiles of chip 0 send 100 KB each to chip 1 (see above). The
    // senders' ports take 25,616 cycles, the receivers' too; each tile waits 24,455 for the
    // links (50,071 - 25,616) and 800 for the hop, so on 32 tiles the mean port is
    // 20 · 25,616 / 32.
    let mut t = Target::gc200_multi(2);
    t.tiles_per_ipu = 16;
    let xs: Vec<Transfer> = (0..10).map(|i| xfer(i, 102_400, &[16 + i])).collect();
    let c = exchange_cost(&t, &xphase(xs.clone()));
    let e = c.even_ports(32);
    assert_eq!(e.max_link_and_hop_cycles, 24_455 + 800);
    assert!((e.mean_port_cycles - 20.0 * 25_616.0 / 32.0).abs() < 1e-9);
    let mean = 20.0 * 50_871.0 / 32.0;
    assert!((e.effectiveness - mean / (e.mean_port_cycles + 25_255.0)).abs() < 1e-12);
    let mut x = exe(t);
    x.exchanges = vec![xphase(xs)].into();
    let text = CycleModel::new(&x).text_summary();
    assert!(
        text.contains(&format!(
            "+ 24455 + 800; even ports = {:.0} + 25255, {:.1}%\n",
            e.mean_port_cycles,
            100.0 * e.effectiveness
        )),
        "{text}"
    );
}

#[test]
fn gw_links_join_pods_at_their_own_rate_and_latency() {
    let mut t = Target::pods(2, 16);
    t.tiles_per_ipu = 4;
    // Four tiles of chip 3 each send 100 KB to chip 19, the same slot of the next Pod: one GW
    // hop and no IPU-Link hop; the chip's GW share (25 GB/s / 4 chips) carries 409,600 bytes.
    let xs: Vec<Transfer> = (0..4).map(|i| xfer(12 + i, 102_400, &[76 + i])).collect();
    let c = exchange_cost(&t, &xphase(xs.clone()));
    assert!(c.links[0].gw);
    let gw = (409_600f64 / t.gw_link_bytes_per_cycle).ceil() as u64;
    assert_eq!(gw, 87_163);
    assert_eq!(c.max, gw + u64::from(t.gw_hop_latency_cycles));
    // Inside a Pod (chip 3 to chip 2, one rung) the same bytes take the IPU-Links, whose
    // 409,600 × 1.33 / 27.2 = 20,028.2, so 20,029 cycles, are under each tile's port time.
    let xs: Vec<Transfer> = (0..4).map(|i| xfer(12 + i, 102_400, &[8 + i])).collect();
    let c = exchange_cost(&t, &xphase(xs));
    assert!(!c.links[0].gw);
    assert_eq!(c.links[0].cycles, 20_029);
    assert_eq!(c.max, 16 + 25_600 + 800);
}

/// A target whose tiles have one worker context, so that a vertex's estimate is its tile
/// cycles: the replay tests below are about clocks and syncs, not the barrel.
fn one_worker(mut t: Target) -> Target {
    t.workers_per_tile = 1;
    t
}

/// Two compute phases: tile 0 busy 100 then idle, tile 1 busy 10 then 100.
fn two_phase_exe() -> Executable {
    let mut e = exe(one_worker(Target::custom(2, 1024)));
    e.computes.push(phase(
        "A",
        vec![tile(0, vec![v(100, false)]), tile(1, vec![v(10, false)])],
    ));
    e.computes
        .push(phase("B", vec![tile(1, vec![v(100, false)])]));
    e
}

#[test]
fn elided_sync_lets_a_phase_start_early() {
    let e = two_phase_exe();
    // No sync between A and B: tile 1 runs B right after its part of A.
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(compute(0));
    r.record(compute(1));
    r.record(END);
    let p = r.profile();
    assert_eq!(p.elapsed.compute, 110);
    assert_eq!(p.elapsed.sync, 0);
    assert_eq!(p.tiles.compute, vec![100, 110]);
    // With an internal sync, B waits for tile 0: 100 + 150 + 100.
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(compute(0));
    r.record(RunEvent::Sync(SyncKind::Internal));
    r.record(compute(1));
    r.record(END);
    let p = r.profile();
    assert_eq!(p.total_cycles(), 350);
    assert_eq!(p.elapsed.sync, 150);
    assert_eq!(p.tiles.sync, vec![150, 90 + 150]);
    assert_eq!(p.syncs.internal, 1);
}

#[test]
fn internal_sync_waits_per_chip_global_for_all() {
    let mut t = one_worker(Target::gc200_multi(2));
    t.tiles_per_ipu = 1;
    let mut e = exe(t);
    e.computes.push(phase(
        "A",
        vec![tile(0, vec![v(100, false)]), tile(1, vec![v(10, false)])],
    ));
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(compute(0));
    r.record(RunEvent::Sync(SyncKind::Internal));
    r.record(END);
    // Each chip syncs alone: no waiting across chips.
    assert_eq!(r.profile().tiles.sync, vec![150, 150]);
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(compute(0));
    r.record(RunEvent::Sync(SyncKind::Global));
    r.record(END);
    // Two chips: the internal 150 plus the early IPUModel's 15 ns × 2 over 1 + 2/4 = 1 hop,
    // ceil(39.9) = 40.
    let g = 150 + 40;
    assert_eq!(r.profile().tiles.sync, vec![g, 90 + g]);
    assert_eq!(r.profile().total_cycles(), 100 + g);
}

#[test]
fn memoised_and_long_segments_match_the_formula() {
    let e = two_phase_exe();
    // 1000 iterations of [A, sync, B, sync]: memoised as one segment.
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(RunEvent::Enter { label: "loop" });
    for _ in 0..1000 {
        r.record(compute(0));
        r.record(RunEvent::Sync(SyncKind::Internal));
        r.record(compute(1));
        r.record(RunEvent::Sync(SyncKind::Internal));
    }
    r.record(RunEvent::Exit);
    r.record(END);
    let p = r.profile().clone();
    assert_eq!(p.total_cycles(), 1000 * 500);
    assert_eq!(p.elapsed.compute, 1000 * 200);
    let l = p.label("loop").unwrap();
    assert_eq!(l.executions, 1);
    assert_eq!(l.elapsed.total(), 1000 * 500);
    assert_eq!(p.summary_by_label()[0].sync, 1000 * 300);
    // Many steps without a sync: replayed in pieces of SEGMENT_LIMIT, clocks carried over.
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    let n = 3 * SEGMENT_LIMIT as u64 + 7;
    for _ in 0..n {
        r.record(compute(0));
        r.record(compute(1));
    }
    r.record(RunEvent::Sync(SyncKind::Internal));
    r.record(compute(0));
    r.record(END);
    let p = r.profile();
    // Tile 0: 100 per iteration; tile 1: 110 per iteration (the slowest).
    assert_eq!(p.elapsed.compute, 110 * n + 100);
    assert_eq!(p.tiles.sync, vec![10 * n + 150, 150]);
    assert_eq!(p.total_cycles(), 110 * n + 150 + 100);
}

#[test]
fn stats_and_effectiveness() {
    let s = Stats::of(&[0, 10, 20, 30]);
    assert_eq!((s.min, s.median, s.max), (0, 20, 30));
    assert_eq!(s.mean, 15.0);
    assert!((s.std - 125f64.sqrt()).abs() < 1e-12);
    assert_eq!(s.effectiveness, 0.5);
    assert_eq!(Stats::of(&[]).effectiveness, 0.0);
}

#[test]
fn timeline_has_one_span_per_track_and_phase() {
    let e = two_phase_exe();
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(RunEvent::Enter { label: "main" });
    r.record(compute(0));
    r.record(RunEvent::Sync(SyncKind::Internal));
    r.record(compute(1));
    r.record(RunEvent::Exit);
    r.record(END);
    let tl = &r.profile().timeline;
    assert_eq!(tl.tracks.len(), 3);
    let spans: Vec<_> = tl
        .spans
        .iter()
        .map(|s| (s.track, tl.names[s.name as usize].as_str(), s.start, s.dur))
        .collect();
    assert!(spans.contains(&(1, "A", 0, 100)));
    assert!(spans.contains(&(2, "A", 0, 10)));
    assert!(spans.contains(&(2, "sync (internal)", 10, 240)));
    assert!(spans.contains(&(2, "B", 250, 100)));
    assert!(spans.contains(&(0, "main", 0, 350)));
}

/// `Profile::save` replaces the file (a temporary beside it, renamed), never rewrites it in
/// place: a hard link to the old file keeps the old contents, a failed save leaves the old file
/// and no temporary, and the saved file reads back.
#[cfg(unix)]
#[test]
fn a_profile_is_saved_atomically() {
    let e = two_phase_exe();
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(compute(0));
    r.record(END);
    let p = r.profile().clone();
    let dir = std::env::temp_dir().join(format!("poplar-exe-profile-save-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("profile.json");
    std::fs::write(&path, "old").unwrap();
    std::fs::hard_link(&path, dir.join("link")).unwrap();
    p.save(&path).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("link")).unwrap(), "old");
    assert_eq!(Profile::load(&path).unwrap().to_json(), p.to_json());
    // Into a folder that does not exist: an error, nothing written.
    assert!(p.save(dir.join("missing").join("profile.json")).is_err());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["link", "profile.json"], "no temporary is left");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small recorded profile as JSON, to be tampered with.
fn recorded_json() -> serde_json::Value {
    let e = two_phase_exe();
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.record(RunEvent::RunStart);
    r.record(compute(0));
    r.record(RunEvent::Sync(SyncKind::Internal));
    r.record(compute(1));
    r.record(END);
    let json = r.profile().to_json();
    Profile::from_json(&json).expect("a recorded profile loads");
    serde_json::from_str(&json).unwrap()
}

fn refused(v: &serde_json::Value) -> String {
    match Profile::from_json(&v.to_string()) {
        Ok(_) => panic!("accepted: {v}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn absurd_profiles_are_refused_naming_the_field() {
    for clock in [0.0, -1e9] {
        let mut v = recorded_json();
        v["target"]["clock_hz"] = serde_json::json!(clock);
        let e = refused(&v);
        assert!(e.contains("clock"), "{e}");
    }
    let mut v = recorded_json();
    v["runs"] = serde_json::json!(0);
    let e = refused(&v);
    assert!(e.contains("runs"), "{e}");
    let mut v = recorded_json();
    v["phases"][0]["tile_cycles"][0][0] = serde_json::json!(7);
    let e = refused(&v);
    assert!(e.contains("tile 7"), "{e}");
    let mut v = recorded_json();
    v["timeline"]["tracks"][1]["last_tile"] = serde_json::json!(99);
    let e = refused(&v);
    assert!(e.contains("tile 99"), "{e}");
    // A cycle count no run reaches (it was summarised): refused, naming the field.
    for (path, field) in [
        (&["elapsed", "compute"][..], "elapsed.compute"),
        (&["elapsed", "sync"][..], "elapsed.sync"),
        (&["phases", "0", "cycles"][..], "phases[0].cycles"),
    ] {
        let mut v = recorded_json();
        let mut at = &mut v;
        for k in path {
            at = match k.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*k],
            };
        }
        *at = serde_json::json!(u64::MAX);
        let e = Profile::from_json(&v.to_string()).unwrap_err();
        assert!(
            matches!(&e, ProfileError::Implausible { field: f, value } if f == field && *value == u64::MAX),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("implausible profile: {field} is 18446744073709551615 cycles, more than any run can reach (at most 4611686018427387904)")
        );
    }
    let mut v = recorded_json();
    v["tiles"]["exchange"][1] = serde_json::json!(MAX_PROFILE_CYCLES + 1);
    assert!(refused(&v).contains("tiles.exchange[1]"));
    let mut v = recorded_json();
    v["elapsed"]["compute"] = serde_json::json!(MAX_PROFILE_CYCLES);
    Profile::from_json(&v.to_string()).expect("the bound itself is accepted");
}

#[test]
fn empty_and_non_object_profiles_say_what_they_are() {
    let e = Profile::from_json("").unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
    let e = Profile::from_json("  \n").unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
    let e = Profile::from_json("[]").unwrap_err().to_string();
    assert!(
        e.contains("not a poplar profile") && e.contains("array"),
        "{e}"
    );
}

/// A FIFO with nobody writing to it: opening it for reading would block forever.
fn fifo(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("poplar-fifo-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    let ok = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", p.display());
    p
}

/// Runs `f` on another thread; fails the test if it does not return within 10 s.
fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("reading a FIFO blocked")
}

#[test]
fn non_regular_files_are_refused_without_reading() {
    let p = fifo("profile");
    let q = p.clone();
    let e = promptly(move || Profile::load(&q).map(|_| ()).unwrap_err().to_string());
    assert!(
        e.contains(&p.display().to_string()) && e.contains("not a regular file"),
        "{e}"
    );
    let q = p.clone();
    let e = promptly(move || {
        crate::exe::Executable::load_unlinked(&q)
            .map(|_| ())
            .unwrap_err()
    });
    assert!(
        matches!(e.file(), Some(crate::exe::FileError::NotAFile { .. })),
        "{e}"
    );
    assert!(e.to_string().contains(&p.display().to_string()), "{e}");
    let _ = std::fs::remove_file(&p);
    // A directory, too.
    let d = std::env::temp_dir();
    let e = Profile::load(&d).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
    let e = crate::exe::Executable::load_unlinked(&d).unwrap_err();
    assert!(
        matches!(e.file(), Some(crate::exe::FileError::NotAFile { .. })),
        "{e}"
    );
}

#[test]
fn a_profile_records_its_executables_checksum() {
    let e = two_phase_exe();
    let v = recorded_json();
    assert_eq!(v["executable_checksum"].as_u64(), Some(e.checksum()), "{v}");
    let p = Profile::from_json(&v.to_string()).unwrap();
    assert_eq!(p.executable_checksum, Some(e.checksum()));
    // Older profiles have none: they still load.
    let mut v = v;
    v.as_object_mut().unwrap().remove("executable_checksum");
    let p = Profile::from_json(&v.to_string()).unwrap();
    assert_eq!(p.executable_checksum, None);
    // Cleared recorders keep it.
    let mut r = Recorder::new(&e, ProfileOptions::default());
    r.clear();
    r.record(RunEvent::RunStart);
    r.record(END);
    assert_eq!(r.profile().executable_checksum, Some(e.checksum()));
}

/// The memory report of Streaming Memory.
mod streaming_memory;
