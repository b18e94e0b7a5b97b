//! The server's worker thread: runs the newest analysis job, reports its outcome.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::diagnostic::InputError;
use crate::report::Report;
use crate::source::Overlay;

/// One analysis to run: the root and the unsaved buffers at the time.
pub(super) struct Job {
    pub(super) root: PathBuf,
    /// The number of edits made when the job was made.
    pub(super) edits: u64,
    pub(super) overlay: Arc<Overlay>,
    /// Versions of the open documents in the overlay.
    pub(super) versions: HashMap<PathBuf, i32>,
    /// Set when an edit makes the job stale: its run stops early.
    pub(super) cancel: Arc<AtomicBool>,
}

pub(super) struct Outcome {
    pub(super) edits: u64,
    pub(super) versions: HashMap<PathBuf, i32>,
    pub(super) result: Result<Report, InputError>,
    pub(super) elapsed: Duration,
}

/// The worker: runs the newest job it has, reports, waits for the next. Ends when
/// the job channel closes.
pub(super) fn worker(jobs: Option<usize>, cache: bool, rx: Receiver<Job>, tx: Sender<Outcome>) {
    while let Ok(mut job) = rx.recv() {
        while let Ok(newer) = rx.try_recv() {
            job = newer;
        }
        let start = Instant::now();
        // Superseded before it started: the newer job is already on its way.
        if job.cancel.load(Ordering::Relaxed) {
            continue;
        }
        let options = crate::Options {
            jobs,
            overlay: job.overlay.clone(),
            cancel: Some(job.cancel.clone()),
            cache,
            ..crate::Options::default()
        };
        let result =
            std::panic::catch_unwind(|| crate::check(std::slice::from_ref(&job.root), &options))
                .unwrap_or_else(|panic| {
                    Err(InputError {
                        path: String::new(),
                        line: None,
                        column: None,
                        message: format!(
                            "internal error: {}",
                            crate::diagnostic::panic_message(panic.as_ref())
                        ),
                    })
                });
        let outcome = Outcome {
            edits: job.edits,
            versions: job.versions,
            result,
            elapsed: start.elapsed(),
        };
        if tx.send(outcome).is_err() {
            return;
        }
    }
}
