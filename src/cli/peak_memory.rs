//! The benchmarks' memory figures: this process's peak resident memory (Linux), and its peak
//! heap, each reset between phases so that each phase's peak is its own.
//!
//! Resident memory counts the pages of the program's own code that a phase runs, which are
//! read from the binary and shared, not held: writing Parquet runs several MB of code that
//! reading a trace never touches. The heap is what the phase itself holds, so the benchmarks
//! print both.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Peak resident memory of this process in bytes (Linux; `None` elsewhere).
pub(crate) fn vm_hwm() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Resets both peaks, so that the next phase's are its own.
pub(crate) fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    HEAP.peak.store(HEAP.now.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The most heap held at once since the last [`reset_hwm`], in bytes.
pub(crate) fn heap_peak() -> u64 {
    HEAP.peak.load(Ordering::Relaxed) as u64
}

/// Bytes in MB (10^6 bytes), as the benchmarks print them.
pub(crate) fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The system allocator, counting the bytes it holds and their peak: two relaxed atomic
/// operations a call, no figure in any command but `bench`.
struct Counted {
    now: AtomicUsize,
    peak: AtomicUsize,
}

#[global_allocator]
static HEAP: Counted = Counted { now: AtomicUsize::new(0), peak: AtomicUsize::new(0) };

impl Counted {
    fn grew(&self, bytes: usize) {
        let now = self.now.fetch_add(bytes, Ordering::Relaxed).wrapping_add(bytes);
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    fn shrank(&self, bytes: usize) {
        self.now.fetch_sub(bytes, Ordering::Relaxed);
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

    /// The peak counts a block while it is held, grown by reallocation too, and a reset starts
    /// it again from what is held now. Other tests allocate beside this one, so only bounds
    /// that they cannot break are checked.
    #[test]
    fn the_heap_peak_counts_what_is_held() {
        let mut held: Vec<u8> = Vec::with_capacity(1 << 20);
        held.resize(64 << 20, 1);
        assert!(heap_peak() >= 64 << 20, "{} bytes", heap_peak());
        drop(held);
        reset_hwm();
        assert!(heap_peak() < 64 << 20, "{} bytes", heap_peak());
    }
}
