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
