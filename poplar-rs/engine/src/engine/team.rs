//! The threads of one multi-threaded `Engine::run`: the interpreting thread plus helpers that
//! stay awake between supersteps.
//!
//! Rayon's fork-join put a thread to sleep whenever it waited more than a few tens of µs: at
//! the end of every unevenly finishing phase, and then again until the next phase woke it.
//! On the 2-core host each wake-up took 50–120 µs, several times per ODE step of the cardiac
//! solver. Here the helpers spin (then yield) on an atomic generation counter for the whole
//! run, and the tasks of a phase are handed out one at a time from a shared counter, so every
//! thread finishes within one task of the others.
//!
//! Protocol, for one job: the interpreting thread resets the task counter, stores the job and
//! bumps `gen` (release); each helper sees the new `gen` (acquire), claims tasks until none is
//! left, and counts itself `done` (release); the interpreting thread claims tasks too, then
//! waits until every helper is done (acquire) before it goes on. So everything a phase wrote
//! happens-before everything the next phase (or the host) reads.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::EngineError;

/// The pool whose threads join a run's team; `None` for one thread, which runs everything on
/// the caller's thread.
pub(crate) fn pool(threads: usize) -> Result<Option<rayon::ThreadPool>, EngineError> {
    if threads <= 1 {
        return Ok(None);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(8 << 20)
        .thread_name(|i| format!("poplar-engine-{i}"))
        .build()
        .map(Some)
        .map_err(|e| EngineError::ThreadPool(e.to_string()))
}

/// Spins (a `pause` each, a few µs in all) before a waiting thread starts yielding its core.
/// Yielding early matters when the host puts two team threads on one core (seen on the 2-core
/// VM: with 2,000 spins some runs of a short-superstep loop took 4× as long); the cardiac
/// solver's step time did not change between 50 and 2,000. Under Miri, whose threads take
/// turns, spinning only burns interpreter time.
const SPINS_BEFORE_YIELD: u32 = if cfg!(miri) { 0 } else { 100 };

/// What the team works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Job {
    Compute(u32),
    Exchange(u32),
    /// An exchange and a compute phase interleaved tile by tile (`interleave.rs`).
    Interleaved(u32),
    /// A straight run of supersteps run group by group (`grouped.rs`).
    Grouped(u32),
    /// The run is over: helpers return.
    Stop,
}

impl Job {
    fn encode(self) -> u64 {
        match self {
            Job::Compute(i) => u64::from(i),
            Job::Exchange(i) => (1 << 32) | u64::from(i),
            Job::Interleaved(i) => (2 << 32) | u64::from(i),
            Job::Grouped(i) => (3 << 32) | u64::from(i),
            Job::Stop => u64::MAX,
        }
    }

    fn decode(v: u64) -> Job {
        match v {
            u64::MAX => Job::Stop,
            v if v >> 32 == 1 => Job::Exchange(v as u32),
            v if v >> 32 == 2 => Job::Interleaved(v as u32),
            v if v >> 32 == 3 => Job::Grouped(v as u32),
            v => Job::Compute(v as u32),
        }
    }
}

/// Shared state of the threads of one run.
pub(crate) struct Team {
    /// Bumped for every job; helpers wait for it to change.
    gen: AtomicU64,
    job: AtomicU64,
    /// Next unclaimed task of the current job.
    next: AtomicUsize,
    /// Helpers finished with the current job.
    done: AtomicUsize,
    /// Helpers that have started.
    joined: AtomicUsize,
    helpers: usize,
    /// The failure of the current job with the lowest key (its task, or its phase and tile).
    error: Mutex<Option<(u128, EngineError)>>,
    /// A helper panicked (an engine bug, not a codelet's: those are caught per vertex).
    panicked: AtomicBool,
}

impl Team {
    pub(crate) fn new(helpers: usize) -> Team {
        Team {
            gen: AtomicU64::new(0),
            job: AtomicU64::new(Job::Stop.encode()),
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            joined: AtomicUsize::new(0),
            helpers,
            error: Mutex::new(None),
            panicked: AtomicBool::new(false),
        }
    }

    /// The next task index below `n`, if any is left.
    pub(crate) fn claim(&self, n: usize) -> Option<usize> {
        let t = self.next.fetch_add(1, Ordering::Relaxed);
        (t < n).then_some(t)
    }

    /// Records a failure with order `key` (the failing task's index, or for a grouped run its
    /// phase and tile), keeping the lowest key's (so the error reported does not depend on
    /// which thread ran what).
    pub(crate) fn fail(&self, key: u128, e: EngineError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        keep_lowest(&mut slot, key, e);
    }

    /// A helper's life: run each published job with `work` until [`Job::Stop`].
    pub(crate) fn help(&self, work: impl Fn(Job, &Team)) {
        let mut seen = self.gen.load(Ordering::Acquire);
        self.joined.fetch_add(1, Ordering::Release);
        loop {
            let mut g = self.gen.load(Ordering::Acquire);
            let mut spins = 0;
            while g == seen {
                pause(&mut spins);
                g = self.gen.load(Ordering::Acquire);
            }
            seen = g;
            let job = Job::decode(self.job.load(Ordering::Relaxed));
            if job == Job::Stop {
                return;
            }
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job, self)));
            if ok.is_err() {
                self.panicked.store(true, Ordering::Relaxed);
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }

    /// Waits until every helper has started (so that `run` never waits for a helper that is
    /// not counting itself yet).
    pub(crate) fn wait_joined(&self) {
        let mut spins = 0;
        while self.joined.load(Ordering::Acquire) < self.helpers {
            pause(&mut spins);
        }
    }

    /// Runs `job` on all threads (this one included) and waits for all of them; returns the
    /// lowest failing task's error.
    pub(crate) fn run(&self, job: Job, work: impl Fn(Job, &Team)) -> Result<(), EngineError> {
        self.next.store(0, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.job.store(job.encode(), Ordering::Relaxed);
        self.gen.fetch_add(1, Ordering::Release);
        work(job, self);
        let mut spins = 0;
        while self.done.load(Ordering::Acquire) < self.helpers {
            pause(&mut spins);
        }
        assert!(
            !self.panicked.load(Ordering::Relaxed),
            "an engine helper thread panicked"
        );
        match self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }

    /// Sends the helpers home.
    pub(crate) fn stop(&self) {
        self.job.store(Job::Stop.encode(), Ordering::Relaxed);
        self.gen.fetch_add(1, Ordering::Release);
    }
}

/// Puts failure `e` with order `key` into `slot` unless it already holds one with a lower key.
pub(crate) fn keep_lowest(slot: &mut Option<(u128, EngineError)>, key: u128, e: EngineError) {
    if slot.as_ref().is_none_or(|(k, _)| key < *k) {
        *slot = Some((key, e));
    }
}

/// One step of waiting: a spin hint, and after [`SPINS_BEFORE_YIELD`] of them a yield of the
/// core (so that an oversubscribed host, e.g. tests running side by side, still progresses).
fn pause(spins: &mut u32) {
    if *spins < SPINS_BEFORE_YIELD {
        *spins += 1;
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// Stops the team when the interpreting thread leaves the run, also by unwinding (otherwise
/// the helpers would spin forever and the pool's scope would never end).
pub(crate) struct StopOnDrop<'t>(pub(crate) &'t Team);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_round_trip_through_their_encoding() {
        for j in [
            Job::Compute(0),
            Job::Compute(u32::MAX),
            Job::Exchange(0),
            Job::Exchange(7),
            Job::Interleaved(3),
            Job::Grouped(u32::MAX),
            Job::Stop,
        ] {
            assert_eq!(Job::decode(j.encode()), j);
        }
    }

    #[test]
    fn every_task_runs_once_and_the_lowest_failure_wins() {
        let team = Team::new(3);
        let counts: Vec<AtomicUsize> = (0..500).map(|_| AtomicUsize::new(0)).collect();
        let work = |job: Job, t: &Team| {
            if let Job::Compute(n) = job {
                while let Some(k) = t.claim(n as usize) {
                    counts[k].fetch_add(1, Ordering::Relaxed);
                    if k % 97 == 5 {
                        t.fail(k as u128, EngineError::NoSuchProgram { index: k, count: 0 });
                    }
                }
            }
        };
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| team.help(work));
            }
            let _stop = StopOnDrop(&team);
            team.wait_joined();
            for round in 1..=4 {
                let r = team.run(Job::Compute(500), work);
                assert!(
                    matches!(r, Err(EngineError::NoSuchProgram { index: 5, .. })),
                    "{r:?}"
                );
                assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == round));
            }
            assert!(team.run(Job::Compute(0), work).is_ok());
        });
    }
}
