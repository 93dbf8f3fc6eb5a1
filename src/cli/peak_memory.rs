//! The benchmarks' memory figures: this process's peak resident memory (Linux), reset between
//! phases so that each phase's peak is its own, and the peak heap of a piece of work.
//!
//! Resident memory counts the pages of the program's own code that a phase runs, which are
//! read from the binary and shared, not held: writing Parquet runs several MB of code that
//! reading a trace never touches. The heap is what the phase itself holds, so the benchmarks
//! print both.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// Peak resident memory of this process in bytes (Linux; `None` elsewhere).
pub(crate) fn vm_hwm() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Resets the peak resident memory, so that the next phase's is its own.
pub(crate) fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The most heap `work` holds at once beyond what was held when it began, in bytes. The heap
/// is counted only while `work` runs, so that no other command, and no timed phase, pays for
/// the counting.
pub(crate) fn heap_peak_of<T>(work: impl FnOnce() -> T) -> (T, u64) {
    HEAP.now.store(0, Ordering::Relaxed);
    HEAP.peak.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let out = work();
    COUNTING.store(false, Ordering::Relaxed);
    (out, HEAP.peak.load(Ordering::Relaxed).max(0) as u64)
}

/// Bytes in MB (10^6 bytes), as the benchmarks print them.
pub(crate) fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The system allocator, counting while [`heap_peak_of`] asks: the bytes held beyond the
/// start (below zero when older blocks are freed) and their peak. Otherwise a call costs one
/// relaxed load.
struct Counted {
    now: AtomicIsize,
    peak: AtomicIsize,
}

static COUNTING: AtomicBool = AtomicBool::new(false);

#[global_allocator]
static HEAP: Counted = Counted { now: AtomicIsize::new(0), peak: AtomicIsize::new(0) };

impl Counted {
    fn grew(&self, bytes: usize) {
        if COUNTING.load(Ordering::Relaxed) {
            let bytes = bytes as isize;
            let now = self.now.fetch_add(bytes, Ordering::Relaxed).wrapping_add(bytes);
            self.peak.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn shrank(&self, bytes: usize) {
        if COUNTING.load(Ordering::Relaxed) {
            self.now.fetch_sub(bytes as isize, Ordering::Relaxed);
        }
    }
}

// SAFETY: every call is the system allocator's, with the caller's layout; the counting only
// reads the sizes.
unsafe impl GlobalAlloc for Counted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        self.shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.shrank(layout.size());
            self.grew(new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The peak counts a block while it is held, grown by reallocation too, and not one freed
    /// before. Other tests allocate beside this one, so only bounds that they cannot break are
    /// checked.
    #[test]
    fn the_heap_peak_counts_what_is_held() {
        let ((), peak) = heap_peak_of(|| {
            let mut held: Vec<u8> = Vec::with_capacity(1 << 20);
            held.resize(64 << 20, 1);
        });
        assert!(peak >= 64 << 20, "{peak} bytes");
        let old = vec![1u8; 64 << 20];
        let ((), peak) = heap_peak_of(|| drop(old));
        assert!(peak < 64 << 20, "{peak} bytes");
    }
}
