//! Parse-only baseline for `bench/run.sh`: walks the PATH arguments, reads every `.rs`
//! file and parses it with `syn::parse_file` on a big-stack pool (msgaudit's stack
//! size and `--jobs`), nothing else. The floor below which msgaudit cannot go
//! while it parses every file it analyzes.
//!
//! `cargo run --release --example parse_only -- [--jobs N] PATH...`

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;

fn main() {
    let mut jobs = None;
    let mut roots = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--jobs" {
            jobs = args.next().and_then(|n| n.parse().ok());
        } else {
            roots.push(PathBuf::from(a));
        }
    }
    let start = Instant::now();
    let mut files = Vec::new();
    for root in &roots {
        for entry in ignore::WalkBuilder::new(root).build().flatten() {
            let path = entry.into_path();
            if path.extension().is_some_and(|e| e == "rs") && path.is_file() {
                files.push(path);
            }
        }
    }
    let pool = match msgaudit::driver::thread_pool(jobs) {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("parse_only: {e}");
            std::process::exit(2);
        }
    };
    let (lines, failed) = pool.install(|| {
        files
            .par_iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).unwrap_or_default();
                let ok = syn::parse_file(&text).is_ok();
                (text.lines().count(), usize::from(!ok))
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    eprintln!(
        "parse_only: {} files, {lines} lines, {failed} not parsed, {:.3} s, {} threads",
        files.len(),
        start.elapsed().as_secs_f64(),
        pool.current_num_threads()
    );
}
