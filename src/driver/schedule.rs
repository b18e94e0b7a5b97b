//! Runs the crates of a tree on the pool: each admitted by its estimated memory
//! (`budget.rs`) from scheduling threads that hand it to the pool, or named as not
//! analyzed when the address space or the system's memory cannot hold it. The
//! results keep the work list's order.

use std::collections::BTreeMap;

use super::{
    analyze_crate, budget, internal_error, lazy, not_analyzed, AnalysisInput, CrateResult,
    CrateWork, Prefilter, Tick, OUT_OF_MEMORY, STACK_SIZE,
};
use crate::frontend::rust;

/// What every crate's analysis reads.
pub(super) struct Shared<'s, 'a> {
    pub unique_tables: &'s [String],
    pub included: &'s rust::text::Included<'a>,
    pub roots: &'s BTreeMap<&'a str, rust::Roots>,
    pub lexicon: Option<&'s lazy::Lexicon>,
}

/// A crate's share of the progress bar: its own Rust files (not the dependencies'
/// files it is analyzed with, which their own crates count), at least one, so that a
/// large crate moves the bar as far as the many small ones of its size.
pub(super) fn crate_units(key: &str, files: &[&crate::source::SourceFile]) -> u64 {
    (files.iter().filter(|f| f.crate_key == key).count() as u64).max(1)
}

/// The progress bar's length: the crates' units and one per YAML file.
pub(super) fn progress_total(work: &[CrateWork], yaml_files: usize) -> u64 {
    work.iter()
        .map(|(key, files, _)| crate_units(key, files))
        .sum::<u64>()
        + yaml_files as u64
}

/// Analyzes each crate of `work`: the results in its order, and the most crates
/// analyzed at one time.
pub(super) fn run_crates(
    input: &AnalysisInput,
    work: &[CrateWork],
    shared: &Shared,
    bar: &indicatif::ProgressBar,
) -> (Vec<CrateResult>, usize) {
    let pool = input.pool;
    let no_roots = rust::Roots::default();
    // Crates are admitted by their estimated memory (budget.rs), from scheduling
    // threads that hand each admitted crate to the pool; the results keep `work`'s
    // order.
    let largest = budget::largest_crate(
        budget::address_space_limit(),
        pool.current_num_threads(),
        STACK_SIZE,
    );
    let run_budget = input
        .hooks
        .memory_budget_mib
        .map_or(budget::RUN_MEMORY_BUDGET, |m| m.saturating_mul(1 << 20));
    let gate = budget::Gate::new(largest.map_or(run_budget, |l| run_budget.min(l)));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<CrateResult>>> =
        work.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..pool.current_num_threads().max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((key, files, named)) = work.get(i) else {
                    break;
                };
                let _tick = Tick(bar, crate_units(key, files));
                if input.cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    continue;
                }
                let parsed: u64 = files
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| named.as_ref().is_none_or(|n| n[*j]))
                    .map(|(_, f)| f.text.len() as u64)
                    .sum();
                let cost = budget::estimate(parsed);
                // A crate that would take more than an address-space limit leaves is
                // not started (it would end the process): its files are named.
                if let Some(limit) = largest.filter(|&l| cost > l) {
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(not_analyzed(
                        key,
                        files,
                        &format!(
                            "not analyzed: its crate needs about {} MiB, more than the \
                             address-space limit leaves ({} MiB); raise `ulimit -v`, or \
                             lower `--jobs`",
                            cost >> 20,
                            limit >> 20
                        ),
                    ));
                    continue;
                }
                let _permit = gate.admit(cost);
                // Once the system has refused memory, the crates still waiting are
                // named as not analyzed, and the run ends with what it found.
                if crate::support::alloc::exhausted() {
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(not_analyzed(key, files, OUT_OF_MEMORY));
                    continue;
                }
                // An internal failure on one crate is reported; the others still run.
                let result = pool.install(|| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        analyze_crate(
                            key,
                            files,
                            shared.unique_tables,
                            input.cancel,
                            input.running,
                            rust::Inputs {
                                apis: input.apis,
                                included: shared.included,
                                include_tests: input.include_tests,
                                roots: shared.roots.get(key).unwrap_or(&no_roots),
                                hooks: input.hooks,
                            },
                            named
                                .as_deref()
                                .zip(shared.lexicon)
                                .map(|(named, lexicon)| Prefilter { named, lexicon }),
                        )
                    }))
                    .unwrap_or_else(|panic| {
                        if crate::support::alloc::is_out_of_memory(&*panic) {
                            // The crate stopped and dropped its trees: the reserve
                            // can be set aside again for what is left of the run.
                            drop(panic);
                            crate::support::alloc::refill();
                            not_analyzed(key, files, OUT_OF_MEMORY)
                        } else {
                            internal_error(files, panic)
                        }
                    })
                });
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            });
        }
    });
    let peak = gate.peak();
    let results = slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_default()
        })
        .collect();
    (results, peak)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{FileKind, SourceFile};

    fn rs(path: &str, krate: &str) -> SourceFile {
        SourceFile {
            path: path.to_string(),
            abs: path.into(),
            text: String::new(),
            bom: false,
            kind: FileKind::Rust,
            crate_key: krate.to_string(),
            package_key: krate.to_string(),
        }
    }

    #[test]
    fn progress_counts_own_files_and_yaml_files() {
        let big: Vec<SourceFile> = (0..40).map(|i| rs(&format!("big/{i}.rs"), "big")).collect();
        let small = [rs("small/lib.rs", "small")];
        let mut small_work: Vec<&SourceFile> = small.iter().collect();
        // The small crate is analyzed with two of the big crate's files: not its own.
        small_work.extend(&big[..2]);
        let work: Vec<CrateWork> = vec![
            ("big", big.iter().collect(), None),
            ("small", small_work, None),
            ("empty", Vec::new(), None),
        ];
        assert_eq!(crate_units("big", &work[0].1), 40);
        assert_eq!(crate_units("small", &work[1].1), 1);
        assert_eq!(crate_units("empty", &work[2].1), 1);
        assert_eq!(progress_total(&work, 3), 40 + 1 + 1 + 3);
    }
}
