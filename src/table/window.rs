//! Which rows of a long table the page draws: the ones in view plus a margin above and below
//! ("overscan"), with blank space standing in for the rest so that the scroll bar keeps the
//! whole table's length. Rows have one fixed height, so the window is arithmetic on the scroll
//! position: drawing cost stays the same at 100 rows or 100,000.

/// A window of rows `start..end` and the blank space above and below it, in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowWindow {
    pub start: usize,
    pub end: usize,
    pub space_above: f64,
    pub space_below: f64,
}

/// The rows to draw of `total` rows of `row_height` pixels, scrolled down `scroll_top` pixels
/// in a view `view_height` pixels tall, with `overscan` rows more on each side (so that a
/// quick scroll shows rows, not a blank, before the next frame draws). A scroll position past
/// the end (the table just got shorter) shows the last rows.
pub fn row_window(total: usize, row_height: f64, scroll_top: f64, view_height: f64, overscan: usize) -> RowWindow {
    if total == 0 || row_height <= 0.0 || !row_height.is_finite() {
        return RowWindow { start: 0, end: total.min(1).saturating_sub(1), space_above: 0.0, space_below: 0.0 };
    }
    let scroll_top = if scroll_top.is_finite() { scroll_top.max(0.0) } else { 0.0 };
    let view_height = if view_height.is_finite() { view_height.max(0.0) } else { 0.0 };
    let in_view = (view_height / row_height).ceil() as usize + 1;
    let first = ((scroll_top / row_height).floor() as usize).min(total.saturating_sub(in_view.min(total)));
    let start = first.saturating_sub(overscan);
    let end = first.saturating_add(in_view).saturating_add(overscan).min(total);
    RowWindow { start, end, space_above: start as f64 * row_height, space_below: (total - end) as f64 * row_height }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn top_of_a_long_table() {
        let w = row_window(100_000, 28.0, 0.0, 512.0, 10);
        assert_eq!((w.start, w.end), (0, 30));
        assert_eq!(w.space_above, 0.0);
        assert_eq!(w.space_below, (100_000 - 30) as f64 * 28.0);
    }

    #[test]
    fn bottom_of_a_long_table_shows_the_last_row() {
        let total = 100_000;
        let w = row_window(total, 28.0, total as f64 * 28.0 - 512.0, 512.0, 10);
        assert_eq!(w.end, total);
        assert_eq!(w.space_below, 0.0);
        assert!(w.end - w.start <= 20 + 20 + 1);
        // Scrolled past the end (the filter just removed rows): still the last rows.
        let w = row_window(50, 28.0, 1e9, 512.0, 10);
        assert_eq!(w.end, 50);
        assert!(w.start < 50);
    }

    #[test]
    fn short_and_empty_tables_draw_everything() {
        let w = row_window(5, 28.0, 0.0, 512.0, 10);
        assert_eq!((w.start, w.end, w.space_above, w.space_below), (0, 5, 0.0, 0.0));
        assert_eq!(
            row_window(0, 28.0, 100.0, 512.0, 10),
            RowWindow { start: 0, end: 0, space_above: 0.0, space_below: 0.0 }
        );
        // Nonsense measurements (a hidden element reads 0 or NaN) never panic.
        assert_eq!(row_window(5, 0.0, f64::NAN, f64::NAN, 1).end, 0);
        assert_eq!(row_window(5, 28.0, f64::NAN, f64::INFINITY, 1).start, 0);
    }

    proptest! {
        #[test]
        fn the_window_covers_the_view_and_the_spaces_add_up(
            total in 0usize..200_000, row in 1.0f64..80.0, top in 0.0f64..1e7, view in 0.0f64..3000.0, overscan in 0usize..30,
        ) {
            let w = row_window(total, row, top, view, overscan);
            prop_assert!(w.start <= w.end && w.end <= total);
            let drawn = w.end - w.start;
            prop_assert!((w.space_above + drawn as f64 * row + w.space_below - total as f64 * row).abs() < 1e-6 * (1.0 + total as f64 * row));
            // Every row at least partly in view is drawn.
            let max_top = (total as f64 * row - view).max(0.0);
            let top = top.min(max_top);
            let first_visible = ((top / row).floor() as usize).min(total);
            let last_visible = (((top + view) / row).ceil() as usize).min(total);
            prop_assert!(w.start <= first_visible, "{:?} misses row {}", w, first_visible);
            prop_assert!(w.end >= last_visible, "{:?} misses row {}", w, last_visible);
            // And never many more than the view and the overscan.
            prop_assert!(drawn <= (view / row).ceil() as usize + 2 + 2 * overscan);
        }
    }
}
