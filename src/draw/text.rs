//! How wide text draws, without a browser: the drawings cut and wrap their labels to fit.
//!
//! The widths are DejaVu Sans's advances, the widest of the fonts `system-ui` falls back to
//! (and the one headless Chromium on Linux draws with), so that text measured here never runs
//! past its box or column in a browser. A count of characters does not do: 28 of them took 150
//! units in one chart label and 190 in another (`mm_default = f32[32, 64] mm`).

/// The font size the advances were measured at, px.
const MEASURED_AT: f64 = 11.5;

/// The advance of `c` at [`MEASURED_AT`] px, px, rounded up; characters not listed take a full
/// em.
fn advance_measured(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | 'I' | 'J' | '\'' => 3.3,
        '.' | ',' | ':' | ';' | '/' | '|' | ' ' => 3.9,
        'f' => 4.0,
        'r' | 't' | '(' | ')' | '[' | ']' | '-' | '!' => 4.7,
        '_' | '*' => 5.8,
        's' | 'z' | 'c' => 6.4,
        'k' | 'v' | 'x' | 'y' | '?' => 6.9,
        'w' => 9.5,
        'm' => 11.3,
        'W' => 11.4,
        'M' => 10.0,
        'a'..='z' | '0'..='9' => 7.35,
        'A'..='Z' => 9.1,
        '×' | '<' | '>' | '+' | '=' | '#' | '&' => 9.7,
        _ => MEASURED_AT,
    }
}

/// The advance of `c` in ems.
pub fn advance_em(c: char) -> f64 {
    advance_measured(c) / MEASURED_AT
}

/// The width of `s` drawn at `font` px, px.
pub fn width(s: &str, font: f64) -> f64 {
    s.chars().map(advance_em).sum::<f64>() * font
}

/// `s` whole when it fits in `room` px at `font` px, otherwise its longest beginning that fits
/// with an ellipsis ending what was cut.
pub fn fit(s: &str, room: f64, font: f64) -> String {
    if width(s, font) <= room {
        return s.to_string();
    }
    let mut used = advance_em('…') * font;
    let mut out = String::new();
    for c in s.chars() {
        used += advance_em(c) * font;
        if used > room {
            break;
        }
        out.push(c);
    }
    format!("{}…", out.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_add_up_and_fitting_cuts_with_an_ellipsis() {
        assert!((width("il", 11.5) - 6.6).abs() < 1e-9);
        assert!((width("mm", 23.0) - 45.2).abs() < 1e-9);
        assert_eq!(fit("aten::copy_", 100.0, 11.5), "aten::copy_");
        let cut = fit("mm_default = f32[32, 64] mm", 100.0, 12.0);
        assert!(cut.ends_with('…') && width(&cut, 12.0) <= 100.0, "{cut}");
        assert!("mm_default = f32[32, 64] mm".starts_with(cut.trim_end_matches('…')));
        // Nothing fits: only the ellipsis.
        assert_eq!(fit("abc", 1.0, 12.0), "…");
    }
}
