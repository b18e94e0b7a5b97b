//! The process's allocator, with a reserve for running out of memory.
//!
//! Rust aborts the process when the allocator refuses memory, and an aborted run
//! prints nothing: every finding already made is lost. [`Reserved`] wraps the real
//! allocator and sets aside [`RESERVE_BYTES`] of address space at start
//! ([`Reserved::hold`]). When the system refuses an allocation, the reserve is given
//! back, the allocation is tried again, and [`exhausted`] turns true.
//!
//! From then on the analysis winds down: the driver starts no more crates (their
//! files are named as not analyzed), and a crate in progress stops at its next check
//! point ([`bail_if_exhausted`], once per file and phase and once per function),
//! unwinding with an [`OutOfMemory`] payload that drops its trees. A refusal that
//! finds the reserve already given back (another thread's, at the same time, or a
//! second one) waits for those crates to free their memory and tries again
//! ([`WAIT_ROUNDS`]); once they have, [`refill`] sets the reserve aside again for the
//! report. Only a refusal that no freed memory answers still aborts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::time::Duration;

/// Address space set aside at start and given back on the first refusal: enough to
/// finish the crate in progress up to its next check and to write the report. It is
/// taken from the C allocator, which maps a block this large on its own and unmaps it
/// when freed, so the address space is the system's again at once (an allocator with
/// arenas would keep it for its own pages).
pub const RESERVE_BYTES: usize = 64 * 1024 * 1024;

/// How often a refusal with no reserve left is tried again, [`WAIT_STEP`] apart,
/// while the crates in progress stop and free their memory (about a second).
pub const WAIT_ROUNDS: u32 = 100;
const WAIT_STEP: Duration = Duration::from_millis(10);

/// The payload a crate's analysis unwinds with when the system has refused memory
/// ([`bail_if_exhausted`]): the driver names its files as not analyzed.
#[derive(Debug)]
pub struct OutOfMemory;

/// The reserve and whether it was used: the process's allocator keeps [`GLOBAL`].
pub struct State {
    reserve: AtomicPtr<u8>,
    exhausted: AtomicBool,
    armed: AtomicBool,
}

impl State {
    const fn new() -> State {
        State {
            reserve: AtomicPtr::new(null_mut()),
            exhausted: AtomicBool::new(false),
            armed: AtomicBool::new(false),
        }
    }
}

impl State {
    /// Sets the reserve aside unless it is; true when it is held afterwards.
    fn take_reserve(&self) -> bool {
        if !self.reserve.load(Ordering::SeqCst).is_null() {
            return true;
        }
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { System.alloc(reserve_layout()) };
        if p.is_null() {
            return false;
        }
        if self
            .reserve
            .compare_exchange(null_mut(), p, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // SAFETY: allocated just above with this layout (another thread set one aside).
            unsafe { System.dealloc(p, reserve_layout()) };
        }
        true
    }
}

static GLOBAL: State = State::new();

fn reserve_layout() -> Layout {
    // A constant size and a power-of-two alignment: never fails.
    Layout::from_size_align(RESERVE_BYTES, 4096).unwrap_or(Layout::new::<u8>())
}

/// `A` with a reserve given back when it refuses an allocation.
pub struct Reserved<A> {
    inner: A,
    state: &'static State,
}

impl<A: GlobalAlloc> Reserved<A> {
    /// The process's allocator (`#[global_allocator]`): [`exhausted`] and [`rearm`]
    /// are about this one.
    pub const fn new(inner: A) -> Reserved<A> {
        Reserved {
            inner,
            state: &GLOBAL,
        }
    }

    /// Sets the reserve aside (once at start, and again by [`rearm`] after a run that
    /// used it). Untouched, it costs address space, not resident memory.
    pub fn hold(&self) {
        self.state.armed.store(true, Ordering::SeqCst);
        self.state.take_reserve();
    }

    /// Gives the reserve back; true when there was one to give.
    fn release(&self) -> bool {
        self.state.exhausted.store(true, Ordering::SeqCst);
        let p = self.state.reserve.swap(null_mut(), Ordering::SeqCst);
        if p.is_null() {
            return false;
        }
        // SAFETY: the reserve came from `System` with this layout.
        unsafe { System.dealloc(p, reserve_layout()) };
        true
    }
}

impl<A: GlobalAlloc> Reserved<A> {
    /// After `inner` refused: gives the reserve back and tries `again` once; with no
    /// reserve left (given back before, or by another thread at the same time),
    /// waits for the crates in progress to stop and free memory, trying `again`
    /// every [`WAIT_STEP`] up to [`WAIT_ROUNDS`] times. Null when nothing answered.
    fn refused(&self, again: impl Fn() -> *mut u8) -> *mut u8 {
        if self.release() {
            let p = again();
            if !p.is_null() {
                return p;
            }
        }
        for _ in 0..WAIT_ROUNDS {
            // Sleeping allocates nothing.
            std::thread::sleep(WAIT_STEP);
            let p = again();
            if !p.is_null() {
                return p;
            }
        }
        null_mut()
    }
}

// SAFETY: every call is forwarded to `A`; a refused allocation is retried after
// freeing a block `A` gave out, or after other threads freed theirs.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Reserved<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc(layout);
        if p.is_null() {
            return self.refused(|| self.inner.alloc(layout));
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc_zeroed(layout);
        if p.is_null() {
            return self.refused(|| self.inner.alloc_zeroed(layout));
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.inner.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.inner.realloc(ptr, layout, new_size);
        if p.is_null() {
            // A refused realloc leaves the block as it was: trying again is sound.
            return self.refused(|| self.inner.realloc(ptr, layout, new_size));
        }
        p
    }
}

/// The system refused an allocation during this run: crates not yet analyzed are
/// left out (and named).
pub fn exhausted() -> bool {
    GLOBAL.exhausted.load(Ordering::SeqCst)
}

/// A check point of a crate's analysis: once the system has refused memory, unwinds
/// with [`OutOfMemory`] (without the panic hook's message), dropping what the crate
/// holds. Only called under the driver's `catch_unwind`, which names the crate's
/// files as not analyzed.
pub fn bail_if_exhausted() {
    if exhausted() {
        std::panic::resume_unwind(Box::new(OutOfMemory));
    }
}

/// `MSGAUDIT_FAULT_INJECT=oom:suffix` (tests): takes memory 32 MiB at a time, as a
/// runaway analysis would, with a check point between blocks, until the system
/// refuses it; then unwinds like any crate that ran out ([`bail_if_exhausted`]).
pub fn hog() -> ! {
    let mut held: Vec<Vec<u8>> = Vec::new();
    loop {
        bail_if_exhausted();
        held.push(vec![0u8; 32 << 20]);
        std::hint::black_box(&held);
    }
}

/// Whether a caught panic is [`bail_if_exhausted`]'s: such a panic is passed on to
/// the driver, never reported as an internal error.
pub fn is_out_of_memory(panic: &(dyn std::any::Any + Send)) -> bool {
    panic.is::<OutOfMemory>()
}

/// After a crate stopped and freed its memory: sets the reserve aside again (when
/// the system gives it) so that a later refusal, while the report is written, is
/// survived too. The run stays [`exhausted`]. True when the reserve is held.
pub fn refill() -> bool {
    GLOBAL.armed.load(Ordering::SeqCst) && GLOBAL.take_reserve()
}

/// Before a new run of a long-lived process (the language server): if the reserve
/// was used, take it again and forget the refusal. A no-op unless the process's
/// allocator is a [`Reserved`] that was armed.
pub fn rearm() {
    if refill() {
        GLOBAL.exhausted.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Refuses every allocation over a size while `refuse` is set.
    struct Picky {
        refuse_over: AtomicUsize,
    }

    unsafe impl GlobalAlloc for Picky {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if layout.size() > self.refuse_over.load(Ordering::SeqCst) {
                return null_mut();
            }
            System.alloc(layout)
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            System.dealloc(ptr, layout)
        }
    }

    #[test]
    fn a_refusal_gives_the_reserve_back_once_and_marks_the_run() {
        static STATE: State = State::new();
        let a = Reserved {
            inner: Picky {
                refuse_over: AtomicUsize::new(usize::MAX),
            },
            state: &STATE,
        };
        a.hold();
        assert!(!STATE.reserve.load(Ordering::SeqCst).is_null());
        assert!(!STATE.exhausted.load(Ordering::SeqCst));
        a.inner.refuse_over.store(1 << 20, Ordering::SeqCst);
        let big = Layout::from_size_align(2 << 20, 8).unwrap();
        // The first refusal frees the reserve and retries (refused again here, since
        // this allocator refuses by size), and the run is marked.
        let p = unsafe { a.alloc(big) };
        assert!(p.is_null());
        assert!(STATE.exhausted.load(Ordering::SeqCst));
        assert!(STATE.reserve.load(Ordering::SeqCst).is_null());
        // The process's own state is another: this run is not marked.
        assert!(!exhausted());
        // Small allocations go on.
        let small = Layout::from_size_align(64, 8).unwrap();
        let q = unsafe { a.alloc(small) };
        assert!(!q.is_null());
        unsafe { a.dealloc(q, small) };
    }

    #[test]
    fn a_refusal_with_the_reserve_gone_waits_for_memory_another_thread_frees() {
        static STATE: State = State::new();
        static A: Reserved<Picky> = Reserved {
            inner: Picky {
                refuse_over: AtomicUsize::new(1 << 20),
            },
            state: &STATE,
        };
        // The reserve was given back already (another thread's refusal): this one
        // can only wait for the crates in progress to free memory.
        STATE.exhausted.store(true, Ordering::SeqCst);
        let freer = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            A.inner.refuse_over.store(usize::MAX, Ordering::SeqCst);
        });
        let big = Layout::from_size_align(2 << 20, 8).unwrap();
        let p = unsafe { A.alloc(big) };
        freer.join().unwrap();
        assert!(!p.is_null(), "the wait ends when memory is freed");
        unsafe { A.dealloc(p, big) };
        // Nothing freed within the wait: refused (the caller aborts).
        A.inner.refuse_over.store(1 << 20, Ordering::SeqCst);
        let started = std::time::Instant::now();
        assert!(unsafe { A.alloc(big) }.is_null());
        assert!(started.elapsed() >= WAIT_STEP * WAIT_ROUNDS);
    }
}
