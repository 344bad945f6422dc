//! Property test: random small graphs (random shapes, tile mappings, views, compute sets and
//! copies) run on the simulator give exactly what a straightforward host interpretation of the
//! same program gives. Also: results are bit-identical for 1 and 2 threads.

use poplar::{compile, CompileOptions, EngineOptions, InPlaceConcat};
use proptest::prelude::*;

use poplar_testkit::random::*;

fn run(case: &Case, threads: usize) -> Host {
    run_with(case, threads, &CompileOptions::default()).0
}

/// Runs `case`; also returns the receive slack the compiler reserved, in bytes.
fn run_with(case: &Case, threads: usize, opts: &CompileOptions) -> (Host, u64) {
    poplar_testkit::link();
    let exe = compile(&case.graph, &case.progs, opts).expect("random graph compiles");
    let slack = exe
        .tiles
        .iter()
        .flat_map(|t| &t.breakdown)
        .filter(|m| m.name.ends_with("(receive slack)"))
        .map(|m| u64::from(m.bytes))
        .sum();
    let (host, _) = run_exe(case, &exe, EngineOptions::with_threads(threads));
    (host, slack)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn simulator_equals_host_interpretation(seed in any::<u64>()) {
        let case = build_case(seed);
        let got = run(&case, 1);
        prop_assert_eq!(got, case.expect.clone(), "seed {}", seed);
    }
}

#[test]
fn in_place_concat_is_exercised_and_changes_no_result() {
    let mode = |in_place_concat| CompileOptions {
        in_place_concat,
        ..Default::default()
    };
    let (mut by_default, mut always) = (0, 0);
    for seed in 1..120u64 {
        let case = build_case(seed * 104_729);
        let (a, slack_default) = run_with(&case, 1, &mode(InPlaceConcat::IfNoLarger));
        let (b, slack_always) = run_with(&case, 1, &mode(InPlaceConcat::Always));
        let (c, none) = run_with(&case, 1, &mode(InPlaceConcat::Never));
        assert_eq!(none, 0, "seed {seed}: slack reserved with Never");
        assert!(slack_default <= slack_always, "seed {seed}");
        assert_eq!(a, case.expect, "seed {seed}");
        assert_eq!(b, case.expect, "seed {seed}");
        assert_eq!(c, case.expect, "seed {seed}");
        by_default += usize::from(slack_default > 0);
        always += usize::from(slack_always > 0);
    }
    // The halo-style views must actually reach the in-place path.
    assert!(
        by_default >= 20 && always >= by_default,
        "bound in place in {by_default} (default) and {always} (always) of 119 cases"
    );
}

#[test]
fn results_are_bit_identical_for_one_and_two_threads() {
    for seed in 1..40u64 {
        let case = build_case(seed * 7919);
        let a = run(&case, 1);
        let b = run(&case, 2);
        let bits = |h: &Host| h.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b), "seed {seed}");
    }
}
