//! The benchmarks' memory figures: this process's peak resident memory, reset between phases
//! so that each phase's peak is its own (Linux; elsewhere no figure).

/// Peak resident memory of this process in bytes (Linux; `None` elsewhere).
pub(crate) fn vm_hwm() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Resets the peak, so that the next phase's VmHWM is its own.
pub(crate) fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Bytes in MB (10^6 bytes), as the benchmarks print them.
pub(crate) fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}
