//! Processor time per phase of the analysis, summed over threads (`--statistics`):
//! crates run in parallel, so wall time per phase does not exist; the sums show
//! where the work goes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A phase of the analysis of a crate or YAML file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Token prefilter, lexical scans, the size guard, blanking test items.
    Lexical,
    /// syn parsing.
    Parse,
    /// Indexing and lowering to the model, retention facts.
    Lower,
    /// The prefilter's closure (what the parsed part needs next).
    Closure,
    /// Flow facts, rules and the inventory.
    Rules,
    /// YAML parsing and lowering.
    Yaml,
}

impl Phase {
    pub const ALL: [Phase; 6] = [
        Phase::Lexical,
        Phase::Parse,
        Phase::Lower,
        Phase::Closure,
        Phase::Rules,
        Phase::Yaml,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Lexical => "lexical",
            Phase::Parse => "parse",
            Phase::Lower => "lower",
            Phase::Closure => "closure",
            Phase::Rules => "rules",
            Phase::Yaml => "yaml",
        }
    }
}

/// Nanoseconds per phase since the process started (every analysis in the process
/// adds to them: a run reports the difference).
static NANOS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];

/// Runs `work`, counting its time to `phase`.
pub fn timed<T>(phase: Phase, work: impl FnOnce() -> T) -> T {
    let (out, ns) = measure(work);
    NANOS[phase as usize].fetch_add(ns, Ordering::Relaxed);
    out
}

/// Runs `work` (waiting for other threads) inside a [`timed`] part of `phase`,
/// not counting its time to the phase. (The counter may wrap below zero until the
/// enclosing part adds its time: the arithmetic is modular, and counters are read
/// only before and after an analysis.)
pub fn untimed<T>(phase: Phase, work: impl FnOnce() -> T) -> T {
    let (out, ns) = measure(work);
    NANOS[phase as usize].fetch_sub(ns, Ordering::Relaxed);
    out
}

fn measure<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let start = Instant::now();
    let out = work();
    let ns = start.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
    (out, ns)
}

/// The counters now.
pub fn snapshot() -> [u64; 6] {
    std::array::from_fn(|i| NANOS[i].load(Ordering::Relaxed))
}

/// Time per phase between two snapshots.
pub fn since(before: [u64; 6]) -> Vec<(&'static str, Duration)> {
    let now = snapshot();
    Phase::ALL
        .iter()
        .map(|p| {
            let i = *p as usize;
            (
                p.name(),
                Duration::from_nanos(now[i].saturating_sub(before[i])),
            )
        })
        .collect()
}
