//! How quantities are written for people: bytes with binary units, durations, percentages.
//! The command line and the page both use these so that their figures read the same.

/// `1536` → `"1.50 KiB"`; values under 1 KiB are exact (`"512 B"`).
pub fn format_bytes(bytes: u64) -> String {
    Bytes(bytes).to_string()
}

/// [`format_bytes`] as a `Display` value, for writing a long table without a `String` per cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let bytes = self.0;
        if bytes < 1024 {
            return write!(f, "{bytes} B");
        }
        let mut value = bytes as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit < UNITS.len() - 1 {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.2} {}", UNITS[unit])
    }
}

/// `1234567` → `"1,234,567"`: exact byte counts stay readable.
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Microseconds with a unit that fits: `0.5` → `"500 ns"`, `1500.0` → `"1.50 ms"`.
pub fn format_duration_us(us: f64) -> String {
    let a = us.abs();
    if a == 0.0 {
        "0 µs".to_string()
    } else if a < 1.0 {
        format!("{:.0} ns", us * 1000.0)
    } else if a < 1000.0 {
        format!("{us:.2} µs")
    } else if a < 1_000_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

/// `s` cut to `width` characters, the last being an ellipsis, when it is longer (table cells
/// and SVG text, which neither wraps nor clips itself).
pub fn ellipsize(s: &str, width: usize) -> String {
    if s.chars().count() > width {
        s.chars().take(width.saturating_sub(1)).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

/// Percentage with two decimals: `16.4285` → `"16.43 %"`.
pub fn format_pct(pct: f64) -> String {
    format!("{pct:.2} %")
}

/// `-0.0` as `0.0`: an empty sum of floats is `-0.0`, which would print as "-0.00 %".
pub fn positive_zero(x: f64) -> f64 {
    x + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ellipsize_counts_characters_not_bytes() {
        assert_eq!(ellipsize("softmax", 7), "softmax");
        assert_eq!(ellipsize("softmax", 5), "soft…");
        assert_eq!(ellipsize("µµµµ", 3), "µµ…");
    }

    #[test]
    fn bytes() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(2_348_810_240), "2.19 GiB");
        assert_eq!(format_bytes(u64::MAX), "16.00 EiB");
    }

    #[test]
    fn digits() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(2_348_810_240), "2,348,810,240");
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration_us(0.5), "500 ns");
        assert_eq!(format_duration_us(12.345), "12.35 µs");
        assert_eq!(format_duration_us(1500.0), "1.50 ms");
        assert_eq!(format_duration_us(2_500_000.0), "2.50 s");
    }
}
