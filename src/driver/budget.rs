//! The run's memory budget: crates are admitted into the pool by their estimated
//! size, so that peak memory does not grow with `--jobs` (issue 38, item 2).
//!
//! A crate's parse trees and model take memory in proportion to the source it
//! parses ([`BYTES_PER_SOURCE_BYTE`], measured on the largest shapes: a file of
//! 100 000 small functions). Before a crate is analyzed its estimate is taken from
//! [`RUN_MEMORY_BUDGET`]; it waits while other crates hold the budget, and is
//! admitted at once when nothing else runs (a crate over the budget by itself runs
//! alone). The estimate is given back as soon as the crate's facts are taken and its
//! trees are freed.
//!
//! Under an address-space limit (`ulimit -v`) the run plans for it: the pool has at
//! most the threads whose stacks take a quarter of it ([`threads_within`]), the
//! budget is at most what is left after the stacks and [`FIXED_ADDRESS_SPACE`], and a
//! crate estimated over that ([`largest_crate`]) is not started: its files are named
//! as not analyzed and the run reports the rest (exit 2).
//!
//! Admission happens on the run's scheduling threads, never on a pool thread: a
//! pool thread waiting inside a crate's parallel parse may pick up another crate's
//! job, and that job must never wait for the budget its own thread holds.

use std::sync::{Condvar, Mutex};

/// What the crates analyzed at one time may take, by their estimates.
pub const RUN_MEMORY_BUDGET: u64 = 768 * 1024 * 1024;

/// Bytes of parse trees and model per byte of parsed Rust source, as estimated
/// (about 280 measured on a file of 100 000 empty functions; ordinary code takes
/// less).
pub const BYTES_PER_SOURCE_BYTE: u64 = 300;

/// The estimated memory of analyzing `source_bytes` of Rust.
pub fn estimate(source_bytes: u64) -> u64 {
    source_bytes.saturating_mul(BYTES_PER_SOURCE_BYTE)
}

/// The process's address-space limit (`ulimit -v`, `prlimit --as`), when one is set.
pub fn address_space_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `r` is a valid, writable rlimit.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
        if ok && r.rlim_cur != libc::RLIM_INFINITY {
            // `rlim_t` is not `u64` on every Unix.
            #[allow(clippy::unnecessary_cast)]
            return Some(r.rlim_cur as u64);
        }
    }
    None
}

/// Address space a run takes besides its crates' trees and its threads' stacks: the
/// program, the allocator's arenas, the out-of-memory reserve, the files read.
pub const FIXED_ADDRESS_SPACE: u64 = 256 * 1024 * 1024;

/// Address space per byte of a crate's estimate: the allocator maps more than it
/// touches (measured: a crate of 100 000 functions peaks at 438 MiB resident and
/// about twice that mapped).
pub const ADDRESS_SPACE_PER_ESTIMATED_BYTE: u64 = 2;

/// Threads whose stacks take at most a quarter of an address-space `limit`.
pub fn threads_within(limit: Option<u64>, stack: usize, wanted: usize) -> usize {
    match limit {
        Some(limit) => wanted.min((limit / 4 / (stack.max(1) as u64)).max(1) as usize),
        None => wanted,
    }
}

/// The largest estimate (see [`estimate`]) a crate may have under an address-space
/// `limit` with `threads` stacks: a crate estimated over it is not analyzed (and
/// named), since starting it would end the process. `None` when there is no limit.
pub fn largest_crate(limit: Option<u64>, threads: usize, stack: usize) -> Option<u64> {
    let limit = limit?;
    let stacks = (threads as u64).saturating_mul(stack as u64);
    Some(
        limit
            .saturating_sub(stacks)
            .saturating_sub(FIXED_ADDRESS_SPACE)
            / ADDRESS_SPACE_PER_ESTIMATED_BYTE,
    )
}

/// Admits work by estimated size within a total.
pub struct Gate {
    budget: u64,
    /// The estimates of the crates running now, and how many there are.
    held: Mutex<(u64, usize)>,
    freed: Condvar,
    /// The most crates that ran at one time (`--statistics`).
    peak: std::sync::atomic::AtomicUsize,
}

/// The budget a running crate holds; given back when dropped.
pub struct Permit<'a> {
    gate: &'a Gate,
    cost: u64,
}

impl Gate {
    pub fn new(budget: u64) -> Gate {
        Gate {
            budget,
            held: Mutex::new((0, 0)),
            freed: Condvar::new(),
            peak: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The most crates that held the budget at one time.
    pub fn peak(&self) -> usize {
        self.peak.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits until `cost` fits beside what runs now (or nothing runs), and takes it.
    pub fn admit(&self, cost: u64) -> Permit<'_> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        while held.1 > 0 && held.0.saturating_add(cost) > self.budget {
            held = self.freed.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        held.0 = held.0.saturating_add(cost);
        held.1 += 1;
        self.peak
            .fetch_max(held.1, std::sync::atomic::Ordering::Relaxed);
        Permit { gate: self, cost }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut held = self.gate.held.lock().unwrap_or_else(|e| e.into_inner());
        held.0 = held.0.saturating_sub(self.cost);
        held.1 -= 1;
        self.gate.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_space_limit_bounds_threads_and_the_largest_crate() {
        let mib = 1u64 << 20;
        assert_eq!(threads_within(None, 64 << 20, 8), 8);
        // A quarter of 1 GiB holds four 64 MiB stacks.
        assert_eq!(threads_within(Some(1024 * mib), 64 << 20, 8), 4);
        assert_eq!(threads_within(Some(16 * mib), 64 << 20, 8), 1);
        assert_eq!(largest_crate(None, 8, 64 << 20), None);
        // 1 GiB, two stacks: (1024 - 128 - 256) / 2 MiB.
        assert_eq!(
            largest_crate(Some(1024 * mib), 2, 64 << 20),
            Some(320 * mib)
        );
        assert_eq!(largest_crate(Some(100 * mib), 2, 64 << 20), Some(0));
    }
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn work_over_the_budget_waits_and_a_lone_crate_over_it_runs() {
        let gate = Gate::new(100);
        let running = AtomicU64::new(0);
        let peak = AtomicU64::new(0);
        std::thread::scope(|s| {
            for cost in [60, 60, 60, 30, 250] {
                let (gate, running, peak) = (&gate, &running, &peak);
                s.spawn(move || {
                    let _p = gate.admit(cost);
                    let now = running.fetch_add(cost, Ordering::SeqCst) + cost;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    running.fetch_sub(cost, Ordering::SeqCst);
                });
            }
        });
        // The 250 ran alone; every other moment stayed within 100.
        let peak = peak.load(Ordering::SeqCst);
        assert!(peak == 250 || peak <= 100, "peak {peak}");
        assert_eq!(gate.held.lock().unwrap().1, 0);
        assert!(gate.peak() >= 1 && gate.peak() <= 3, "{}", gate.peak());
    }
}
