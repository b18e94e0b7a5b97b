//! The process's allocator, with a reserve for running out of memory.
//!
//! Rust aborts the process when the allocator refuses memory, and an aborted run
//! prints nothing: every finding already made is lost. [`Reserved`] wraps the real
//! allocator and sets aside [`RESERVE_BYTES`] of address space at start
//! ([`Reserved::hold`]). When the system refuses an allocation, the reserve is given
//! back, the allocation is tried again, and [`exhausted`] turns true. The driver asks
//! [`exhausted`] before each crate and after each crate's parsing: from then on crates
//! are left out and their files named as not analyzed, so the run ends with what it
//! found, exit 2 and valid output. A second refusal after the reserve is gone still
//! aborts (there is nothing left to give back).

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Address space set aside at start and given back on the first refusal: enough to
/// finish the crate in progress up to its next check and to write the report. It is
/// taken from the C allocator, which maps a block this large on its own and unmaps it
/// when freed, so the address space is the system's again at once (an allocator with
/// arenas would keep it for its own pages).
pub const RESERVE_BYTES: usize = 64 * 1024 * 1024;

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
        if !self.state.reserve.load(Ordering::SeqCst).is_null() {
            return;
        }
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { System.alloc(reserve_layout()) };
        if p.is_null() {
            return;
        }
        if self
            .state
            .reserve
            .compare_exchange(null_mut(), p, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // SAFETY: `p` came from `System` with this layout.
            unsafe { System.dealloc(p, reserve_layout()) };
        }
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

// SAFETY: every call is forwarded to `A`; a refused allocation is retried once after
// freeing a block `A` gave out.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Reserved<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc(layout);
        if p.is_null() && self.release() {
            return self.inner.alloc(layout);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.inner.alloc_zeroed(layout);
        if p.is_null() && self.release() {
            return self.inner.alloc_zeroed(layout);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.inner.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.inner.realloc(ptr, layout, new_size);
        if p.is_null() && self.release() {
            return self.inner.realloc(ptr, layout, new_size);
        }
        p
    }
}

/// The system refused an allocation during this run: crates not yet analyzed are
/// left out (and named).
pub fn exhausted() -> bool {
    GLOBAL.exhausted.load(Ordering::SeqCst)
}

/// Before a new run of a long-lived process (the language server): if the reserve
/// was used, take it again and forget the refusal. A no-op unless the process's
/// allocator is a [`Reserved`] that was armed.
pub fn rearm() {
    if !GLOBAL.armed.load(Ordering::SeqCst) || !GLOBAL.reserve.load(Ordering::SeqCst).is_null() {
        return;
    }
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { System.alloc(reserve_layout()) };
    if p.is_null() {
        return;
    }
    if GLOBAL
        .reserve
        .compare_exchange(null_mut(), p, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // SAFETY: allocated just above with this layout.
        unsafe { System.dealloc(p, reserve_layout()) };
        return;
    }
    GLOBAL.exhausted.store(false, Ordering::SeqCst);
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
}
