//! Tables of results for the page and its exports: every row kept, each cell with a short
//! text to show, the exact value for CSV and a key to sort by. The page draws a window of the
//! rows ([`super::window`]); sorting and filtering run here, over all rows, so that they are
//! tested natively and give the same order the exports have.

use units::{ellipsize, format_bytes, format_duration_us, format_pct, group_digits, plural, positive_zero};

use super::Table;

/// One column: its header and whether it holds numbers (right-aligned, sorted numerically,
/// largest first on the first click).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub header: String,
    pub numeric: bool,
    /// Hidden before any other when the table is too wide for its panel (a detail column:
    /// calls beside times), see [`DataTable::column_to_hide`].
    pub detail: bool,
}

/// One cell: what is shown, the exact value (full kernel name, number in the header's unit)
/// and the key numeric columns sort by.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub exact: String,
    pub sort: f64,
}

impl Cell {
    /// A text cell (sorted by its text).
    pub fn text(s: impl Into<String>) -> Cell {
        let s = s.into();
        Cell { exact: s.clone(), text: s, sort: 0.0 }
    }

    /// A count with thousands separators.
    pub fn count(n: u64) -> Cell {
        Cell { text: group_digits(n), exact: n.to_string(), sort: n as f64 }
    }

    /// A duration in µs, shown with a fitting unit.
    pub fn micros(us: f64) -> Cell {
        let us = positive_zero(us);
        Cell { text: format_duration_us(us), exact: format!("{us}"), sort: us }
    }

    /// A percentage.
    pub fn pct(p: f64) -> Cell {
        let p = positive_zero(p);
        Cell { text: format_pct(p), exact: format!("{p}"), sort: p }
    }

    /// A size in bytes, shown with a binary unit; the exact count is the tooltip and the CSV value.
    pub fn bytes(b: u64) -> Cell {
        Cell { text: format_bytes(b), exact: b.to_string(), sort: b as f64 }
    }

    /// Text shortened to `width` characters for display, whole in `exact` (tooltip, CSV, filter).
    pub fn long_text(s: &str, width: usize) -> Cell {
        Cell { text: ellipsize(s, width), exact: s.to_string(), sort: 0.0 }
    }

    /// A ratio, or a dash when there is none (sorted last).
    pub fn ratio(r: Option<f64>) -> Cell {
        match r {
            Some(r) => Cell { text: format!("{r:.2}×"), exact: format!("{r}"), sort: r },
            None => Cell { text: "—".to_string(), exact: String::new(), sort: f64::NEG_INFINITY },
        }
    }

    /// A number with `places` decimals (the header names the unit), or a dash (sorted last).
    pub fn decimal(v: Option<f64>, places: usize) -> Cell {
        match v.filter(|v| v.is_finite()) {
            Some(v) => {
                let v = positive_zero(v);
                Cell { text: format!("{v:.places$}"), exact: format!("{v}"), sort: v }
            }
            None => Cell { text: "—".to_string(), exact: String::new(), sort: f64::NEG_INFINITY },
        }
    }

    /// Does the cell contain `needle` (already lower-cased)?
    fn matches(&self, needle: &str) -> bool {
        self.text.to_lowercase().contains(needle) || self.exact.to_lowercase().contains(needle)
    }
}

/// A table of trace results, with every row (the page draws a window of them).
#[derive(Debug, Clone, PartialEq)]
pub struct DataTable {
    /// Stable identifier (element ids, export file names).
    pub id: &'static str,
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

/// How a table is ordered: by a column, ascending or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortBy {
    pub column: usize,
    pub descending: bool,
}

impl DataTable {
    /// An empty table with `columns` given as (header, numeric).
    pub fn new(id: &'static str, title: impl Into<String>, columns: &[(&str, bool)]) -> DataTable {
        DataTable {
            id,
            title: title.into(),
            columns: columns
                .iter()
                .map(|&(h, numeric)| Column { header: h.to_string(), numeric, detail: false })
                .collect(),
            rows: Vec::new(),
        }
    }

    /// The row indices to show: those containing `filter` in any cell (case-insensitive;
    /// all for an empty filter), in the order `sort` asks (a stable sort: ties keep the
    /// table's own order).
    pub fn view(&self, sort: Option<SortBy>, filter: &str) -> Vec<usize> {
        let needle = filter.trim().to_lowercase();
        let mut rows: Vec<usize> = (0..self.rows.len())
            .filter(|&i| needle.is_empty() || self.rows[i].iter().any(|c| c.matches(&needle)))
            .collect();
        if let Some(SortBy { column, descending }) = sort.filter(|s| s.column < self.columns.len()) {
            let numeric = self.columns[column].numeric;
            rows.sort_by(|&a, &b| {
                let (x, y) = (&self.rows[a][column], &self.rows[b][column]);
                let o = if numeric { x.sort.total_cmp(&y.sort) } else { x.text.cmp(&y.text) };
                if descending {
                    o.reverse()
                } else {
                    o
                }
            });
        }
        rows
    }

    /// The table with exact values (full kernel names, plain numbers), for CSV.
    pub fn exact_table(&self) -> Table {
        let headers = self.headers(true);
        let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
        for r in &self.rows {
            t.row(r.iter().map(|c| c.exact.clone()));
        }
        t
    }

    /// The table as shown (short names, units), for Markdown.
    pub fn shown_table(&self) -> Table {
        let headers = self.headers(false);
        let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
        for r in &self.rows {
            t.row(r.iter().map(|c| c.text.clone()));
        }
        t
    }

    /// Headers with `>` on numeric columns; for exact values, durations say their unit.
    fn headers(&self, exact: bool) -> Vec<String> {
        self.columns
            .iter()
            .map(|c| {
                let unit = if exact && c.numeric && is_time(&c.header) { " (µs)" } else { "" };
                format!("{}{}{unit}", if c.numeric { ">" } else { "" }, c.header)
            })
            .collect()
    }
}

impl DataTable {
    /// The column to hide next so that a table too wide for its panel fits, given those
    /// `hidden` already: a detail column from the right ([`DataTable::with_details`]), then a
    /// text column from the right (long names are what widen a table), then a number column
    /// from the right; never the first column (what a row is), and two stay.
    pub fn column_to_hide(&self, hidden: &[usize]) -> Option<usize> {
        if self.columns.len().saturating_sub(hidden.len()) <= 2 {
            return None;
        }
        let open = || (1..self.columns.len()).rev().filter(|i| !hidden.contains(i));
        let detail = open().find(|&i| self.columns[i].detail);
        let text = open().find(|&i| !self.columns[i].numeric);
        detail.or(text).or_else(|| open().next())
    }

    /// Marks the columns whose header `is_detail` accepts as details, hidden first when the
    /// table does not fit.
    pub fn with_details(mut self, is_detail: impl Fn(&str) -> bool) -> DataTable {
        for c in &mut self.columns {
            c.detail |= is_detail(&c.header);
        }
        self
    }

    /// The sentence under the table: how many rows it has, or how many of them `matching` the
    /// filter, singular for one ("1 row.", "1 of 3 rows match.").
    pub fn row_count(&self, matching: usize) -> String {
        let total = self.rows.len() as u64;
        if matching < self.rows.len() {
            format!("{} of {} match.", group_digits(matching as u64), plural(total, "row", "rows"))
        } else {
            format!("{}.", plural(total, "row", "rows"))
        }
    }

    /// The table without the column named `header` (e.g. counts a shortened share link no
    /// longer knows); unchanged if there is none.
    pub fn without_column(mut self, header: &str) -> DataTable {
        if let Some(i) = self.columns.iter().position(|c| c.header == header) {
            self.columns.remove(i);
            for r in &mut self.rows {
                r.remove(i);
            }
        }
        self
    }
}

/// Columns holding durations (their exact values are µs).
fn is_time(header: &str) -> bool {
    header.contains("time") || header == "total" || header == "mean"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_too_wide_hides_text_columns_from_the_right_then_numbers_never_the_first() {
        let t = DataTable::new(
            "t",
            "t",
            &[("kernel", false), ("calls", true), ("time", true), ("name", false), ("bytes", true)],
        );
        assert_eq!(t.column_to_hide(&[]), Some(3));
        assert_eq!(t.column_to_hide(&[3]), Some(4));
        assert_eq!(t.column_to_hide(&[3, 4]), Some(2));
        assert_eq!(t.column_to_hide(&[3, 4, 2]), None);
        // Details go first, whatever their kind.
        let t = t.with_details(|h| h == "calls");
        assert_eq!(t.column_to_hide(&[]), Some(1));
        assert_eq!(t.column_to_hide(&[1]), Some(3));
    }

    #[test]
    fn the_row_count_is_singular_for_one_row() {
        let mut t = DataTable::new("t", "t", &[("kernel", false)]);
        assert_eq!(t.row_count(0), "0 rows.");
        t.rows.push(vec![Cell::text("a")]);
        assert_eq!(t.row_count(1), "1 row.");
        assert_eq!(t.row_count(0), "0 of 1 row match.");
        t.rows.extend((0..1233).map(|_| vec![Cell::text("b")]));
        assert_eq!(t.row_count(1234), "1,234 rows.");
        assert_eq!(t.row_count(1), "1 of 1,234 rows match.");
        assert_eq!(t.row_count(12), "12 of 1,234 rows match.");
    }
}
