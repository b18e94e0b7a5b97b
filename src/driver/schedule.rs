//! Runs the crates of a tree on the pool: each admitted by its estimated memory
//! (`budget.rs`) from scheduling threads that hand it to the pool, or named as not
//! analyzed when the address space or the system's memory cannot hold it. The
//! results keep the work list's order.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::{
    analyze_crate, budget, internal_error, lazy, not_analyzed, AnalysisInput, CrateResult,
    CrateWork, Prefilter, OUT_OF_MEMORY, STACK_SIZE,
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

/// A crate's share of the progress bar, advanced by one as each of its own files is
/// first read (the front end tells of each file it parses or declares unparsed), and
/// by what is left of the share when dropped (the crate finished, was skipped, or
/// panicked): a crate moves the bar as it goes, and in all adds exactly its units.
pub(super) struct CrateProgress<'a> {
    bar: &'a indicatif::ProgressBar,
    units: u64,
    done: AtomicU64,
    /// The crate's own files, and whether each was counted.
    own: HashMap<&'a str, AtomicBool>,
}

impl<'a> CrateProgress<'a> {
    pub(super) fn new(
        bar: &'a indicatif::ProgressBar,
        key: &str,
        files: &[&'a crate::source::SourceFile],
    ) -> Self {
        CrateProgress {
            bar,
            units: crate_units(key, files),
            done: AtomicU64::new(0),
            own: files
                .iter()
                .filter(|f| f.crate_key == key)
                .map(|f| (f.path.as_str(), AtomicBool::new(false)))
                .collect(),
        }
    }

    /// A file was read: one step, the first time for each of the crate's own files
    /// (a dependency's file is its own crate's to count).
    pub(super) fn file_read(&self, f: &crate::source::SourceFile) {
        let Some(counted) = self.own.get(f.path.as_str()) else {
            return;
        };
        if !counted.swap(true, Ordering::Relaxed) {
            self.done.fetch_add(1, Ordering::Relaxed);
            self.bar.inc(1);
        }
    }
}

impl Drop for CrateProgress<'_> {
    fn drop(&mut self) {
        let done = self.done.load(Ordering::Relaxed);
        self.bar.inc(self.units.saturating_sub(done));
    }
}

/// The progress bar's length: the crates' units and one per YAML file.
pub(super) fn progress_total(work: &[CrateWork], yaml_files: usize) -> u64 {
    work.iter()
        .map(|(key, files, _)| crate_units(key, files))
        .sum::<u64>()
        + yaml_files as u64
}

/// Analyzes each crate of `work`: the results in its order, the most crates
/// analyzed at one time, and how many results were read from the per-crate cache.
pub(super) fn run_crates(
    input: &AnalysisInput,
    work: &[CrateWork],
    shared: &Shared,
    bar: &indicatif::ProgressBar,
) -> (Vec<CrateResult>, usize, usize) {
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
    let hits = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<CrateResult>>> =
        work.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..pool.current_num_threads().max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((key, files, named)) = work.get(i) else {
                    break;
                };
                let progress = CrateProgress::new(bar, key, files);
                let file_read = |f: &crate::source::SourceFile| progress.file_read(f);
                if input.cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    continue;
                }
                let roots = shared.roots.get(key).unwrap_or(&no_roots);
                // A crate whose files are as a stored run saw them: its result.
                let cached = input.crate_store.map(|store| {
                    (
                        store,
                        store.key(key, files, roots, named.as_deref(), shared.unique_tables),
                    )
                });
                if let Some(hit) = cached.as_ref().and_then(|(store, k)| store.load(k)) {
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(hit);
                    hits.fetch_add(1, Ordering::Relaxed);
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
                        let result = analyze_crate(
                            key,
                            files,
                            shared.unique_tables,
                            input.cancel,
                            input.running,
                            rust::Inputs {
                                apis: input.apis,
                                included: shared.included,
                                include_tests: input.include_tests,
                                roots,
                                hooks: input.hooks,
                                file_read: Some(&file_read),
                            },
                            named
                                .as_deref()
                                .zip(shared.lexicon)
                                .map(|(named, lexicon)| Prefilter { named, lexicon }),
                        );
                        // Stored only when whole: not cut short by a cancel or by
                        // the system's memory.
                        let whole = !input.cancel.load(std::sync::atomic::Ordering::Relaxed)
                            && !crate::support::alloc::exhausted();
                        if let Some((store, k)) = cached.as_ref().filter(|_| whole) {
                            store.store(k, &result);
                        }
                        result
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
    (results, peak, hits.into_inner())
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

    fn rs_text(path: &str, krate: &str, text: &str) -> SourceFile {
        SourceFile {
            text: text.to_string(),
            ..rs(path, krate)
        }
    }

    /// A crate of many files moves the bar one step per file as its files are read,
    /// not in one jump when it finishes, with or without the prefilter (files
    /// declared unparsed count when declared, and once only if parsed later); a
    /// dependency's file analyzed with it does not count; the crate's share is
    /// exact.
    #[test]
    fn a_crate_moves_the_bar_file_by_file() {
        let apis = crate::apis::Apis::builtin();
        let lexicon = lazy::Lexicon::new(&apis);
        let n = 6u64;
        let mut own = vec![rs_text(
            "big/src/lib.rs",
            "big",
            "mod m1;\nmod m2;\nmod m3;\nmod m4;\nmod m5;\n\
             pub fn run(x: u32) -> u32 { m1::helper_1(x) + m5::helper_5(x) }\n",
        )];
        own.extend((1..n).map(|i| {
            rs_text(
                &format!("big/src/m{i}.rs"),
                "big",
                &format!("pub fn helper_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n"),
            )
        }));
        let dep = rs_text("dep/src/lib.rs", "dep", "pub fn dep_helper() {}\n");
        let files: Vec<&SourceFile> = own.iter().chain([&dep]).collect();
        let named: Vec<bool> = (0..files.len()).map(|i| i == 0).collect();
        let (included, roots) = (rust::text::Included::default(), rust::Roots::default());
        let hooks = crate::support::DevHooks::default();
        let cancel = std::sync::atomic::AtomicBool::new(false);
        for prefilter in [false, true] {
            let bar = indicatif::ProgressBar::hidden();
            bar.set_length(n);
            let seen = std::sync::Mutex::new(Vec::new());
            {
                let progress = CrateProgress::new(&bar, "big", &files);
                let file_read = |f: &SourceFile| {
                    progress.file_read(f);
                    seen.lock().unwrap().push(bar.position());
                };
                analyze_crate(
                    "big",
                    &files,
                    &[],
                    &cancel,
                    &|_| true,
                    rust::Inputs {
                        apis: &apis,
                        included: &included,
                        include_tests: false,
                        roots: &roots,
                        hooks: &hooks,
                        file_read: Some(&file_read),
                    },
                    prefilter.then_some(Prefilter {
                        named: &named,
                        lexicon: &lexicon,
                    }),
                );
                // Every own file counted while the crate was read, before it finished.
                assert_eq!(bar.position(), n, "prefilter: {prefilter}");
            }
            let mut steps = seen.into_inner().unwrap();
            steps.dedup();
            steps.retain(|&p| p > 0);
            assert_eq!(steps, (1..=n).collect::<Vec<_>>(), "prefilter: {prefilter}");
            // Finishing adds nothing more: the crate's share is its files.
            assert_eq!(bar.position(), n);
        }
        // A crate of no file of its own, or one left before any file was read, adds
        // its whole share when dropped.
        let bar = indicatif::ProgressBar::hidden();
        drop(CrateProgress::new(&bar, "empty", &[]));
        drop(CrateProgress::new(&bar, "big", &files));
        assert_eq!(bar.position(), 1 + n);
    }
}
