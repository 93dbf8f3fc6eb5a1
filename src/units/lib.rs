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
    /// As `format!("{:.2} {unit}", bytes as f64 / 1024^k)` writes it (the value scaled until it
    /// is under 1024, rounded half to even), in integers: a long table writes millions of
    /// these, and formatting a float to a fixed number of places is the slow path of `fmt`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let bytes = self.0;
        if bytes < 1024 {
            return write!(f, "{bytes} B");
        }
        // The float's value exactly: `bytes as f64` (rounded above 2^53), scaled by 2^-10k,
        // which is exact.
        let value = bytes as f64 as u128;
        let mut unit = 0;
        while unit < UNITS.len() - 1 && value >> (10 * unit) >= 1024 {
            unit += 1;
        }
        let (hundredths, divisor) = (value * 100, 1u128 << (10 * unit));
        let (mut q, r) = (hundredths / divisor, hundredths % divisor);
        if 2 * r > divisor || (2 * r == divisor && q % 2 == 1) {
            q += 1;
        }
        write!(f, "{}.{:02} {}", q / 100, q % 100, UNITS[unit])
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

/// A count and its noun, grouped digits, singular for one: `plural(1, "kernel", "kernels")`
/// → `"1 kernel"`, `plural(1234, …)` → `"1,234 kernels"`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", group_digits(n), if n == 1 { one } else { many })
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

/// `3.4e10` → `"34.36 GFLOP"`: FLOP counts with SI prefixes (append `/s` for rates).
pub fn format_flops(flops: f64) -> String {
    const PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    let mut v = flops;
    let mut i = 0;
    while v.abs() >= 1000.0 && i < PREFIXES.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} FLOP")
    } else {
        format!("{v:.2} {}FLOP", PREFIXES[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plural_is_singular_for_one_only() {
        assert_eq!(plural(1, "kernel", "kernels"), "1 kernel");
        assert_eq!(plural(0, "kernel", "kernels"), "0 kernels");
        assert_eq!(plural(1234, "launch", "launches"), "1,234 launches");
    }

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

    /// The integer formatting of `Bytes` against the float formatting it stands for.
    #[test]
    fn bytes_as_the_float_formatting_writes_them() {
        fn float(bytes: u64) -> String {
            const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
            if bytes < 1024 {
                return format!("{bytes} B");
            }
            let mut value = bytes as f64;
            let mut unit = 0;
            while value >= 1024.0 && unit < UNITS.len() - 1 {
                value /= 1024.0;
                unit += 1;
            }
            format!("{value:.2} {}", UNITS[unit])
        }
        let mut values: Vec<u64> = (0..200_000).collect();
        // Around every unit and every tie (x.xx5 exactly) of the first units, and at random.
        for k in 1..7u32 {
            let unit = 1u64 << (10 * k);
            for m in [1u64, 2, 10, 100, 1000, 1023, 1024] {
                let at = (m as u128 * unit as u128).min(u64::MAX as u128) as u64;
                values.extend((0..64).map(|d| at.saturating_sub(32).saturating_add(d)));
            }
            // Ties: 2^(10k-3) times an odd number is a whole number of eighths of the unit.
            values.extend((0..20_000u64).map(|m| (2 * m + 1).saturating_mul(unit >> 3)));
        }
        // splitmix64, shifted right by a varying amount to cover every magnitude.
        let mut state = 5u64;
        values.extend((0..200_000u64).map(|i| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) >> (i % 64)
        }));
        values.extend([u64::MAX, u64::MAX - 1, 1 << 53, (1 << 53) + 1, 1152, 1_073_741_823]);
        for b in values {
            assert_eq!(Bytes(b).to_string(), float(b), "{b}");
        }
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

    #[test]
    fn flops_read_with_si_prefixes() {
        assert_eq!(format_flops(512.0), "512 FLOP");
        assert_eq!(format_flops(34_359_738_368.0), "34.36 GFLOP");
        assert_eq!(format_flops(4.59e14), "459.00 TFLOP");
    }
}
