//! Tables: [`Table`], plain rows as the command line prints them and the page exports them
//! (aligned text, Markdown for pasting into a review, CSV); [`DataTable`], the page's tables of
//! results with sortable, filterable cells; [`window`], which rows of a long table are drawn.

mod data;
pub mod window;

pub use data::{Cell, Column, DataTable, SortBy};

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io;

/// Column alignment in text and Markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns; a header starting with `>` is right-aligned (the `>` is
    /// dropped), which is what numeric columns want.
    pub fn new(headers: &[&str]) -> Self {
        let align = headers.iter().map(|h| if h.starts_with('>') { Align::Right } else { Align::Left }).collect();
        let headers = headers.iter().map(|h| h.trim_start_matches('>').to_string()).collect();
        Table { headers, align, rows: Vec::new() }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut r: Vec<String> = cells.into_iter().map(Into::into).collect();
        r.resize(self.headers.len(), String::new());
        self.rows.push(r);
    }

    /// Aligned columns separated by two spaces, a rule under the header.
    pub fn to_text(&self) -> String {
        let mut layout = TextLayout { headers: self.headers.clone(), align: self.align.clone(), ..Default::default() };
        layout.widths = self.headers.iter().map(|h| h.chars().count()).collect();
        fn cells(r: &[String]) -> Vec<&dyn fmt::Display> {
            r.iter().map(|c| c as &dyn fmt::Display).collect()
        }
        for r in &self.rows {
            layout.measure(&cells(r));
        }
        let mut out = Vec::new();
        layout.write_header(&mut out).expect("writing to memory");
        for r in &self.rows {
            layout.write_row(&mut out, &cells(r)).expect("writing to memory");
        }
        String::from_utf8(out).expect("the cells are text")
    }

    /// GitHub-flavoured Markdown; cells are escaped ([`markdown_cell`]) so that a name from a
    /// file cannot break the table.
    pub fn to_markdown(&self) -> String {
        let esc = markdown_cell;
        let mut out = format!("| {} |\n", self.headers.iter().map(|h| esc(h)).collect::<Vec<_>>().join(" | "));
        out.push_str(&format!(
            "|{}|\n",
            self.align.iter().map(|a| if *a == Align::Right { "---:" } else { "---" }).collect::<Vec<_>>().join("|")
        ));
        for r in &self.rows {
            out.push_str(&format!("| {} |\n", r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")));
        }
        out
    }

    /// RFC 4180 CSV, safe to open in a spreadsheet: see [`csv_field`].
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        for r in std::iter::once(&self.headers).chain(&self.rows) {
            out.push_str(&r.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }
}

/// [`Table::to_text`] for rows that are not held: [`measure`](Self::measure) every row, then
/// write the header and the rows again, in the same order. Cells are `Display` values, so that
/// a long table needs no `String` per cell; the text is that of a [`Table`] of the same cells.
#[derive(Debug, Clone, Default)]
pub struct TextLayout {
    headers: Vec<String>,
    align: Vec<Align>,
    widths: Vec<usize>,
    /// The line and the cell being written, kept to reuse their memory.
    line: String,
    cell: String,
}

impl TextLayout {
    /// Columns as [`Table::new`] takes them (`>` right-aligns).
    pub fn new(headers: &[&str]) -> Self {
        let t = Table::new(headers);
        let widths = t.headers.iter().map(|h| h.chars().count()).collect();
        TextLayout { headers: t.headers, align: t.align, widths, ..Default::default() }
    }

    /// Widens the columns to fit `cells`.
    pub fn measure(&mut self, cells: &[&dyn fmt::Display]) {
        for (i, c) in cells.iter().enumerate() {
            self.cell.clear();
            let _ = write!(self.cell, "{c}");
            self.widths[i] = self.widths[i].max(self.cell.chars().count());
        }
    }

    /// The header and the rule under it.
    pub fn write_header(&mut self, out: &mut impl io::Write) -> io::Result<()> {
        let headers = std::mem::take(&mut self.headers);
        let cells: Vec<&dyn fmt::Display> = headers.iter().map(|h| h as &dyn fmt::Display).collect();
        let written = self.write_row(out, &cells);
        drop(cells);
        self.headers = headers;
        written?;
        let rule: Vec<String> = self.widths.iter().map(|&n| "-".repeat(n)).collect();
        writeln!(out, "{}", rule.join("  "))
    }

    /// One row, padded to the measured widths (missing cells are empty).
    pub fn write_row(&mut self, out: &mut impl io::Write, cells: &[&dyn fmt::Display]) -> io::Result<()> {
        self.line.clear();
        for i in 0..self.widths.len() {
            self.cell.clear();
            if let Some(c) = cells.get(i) {
                let _ = write!(self.cell, "{c}");
            }
            if i > 0 {
                self.line.push_str("  ");
            }
            let fill = self.widths[i].saturating_sub(self.cell.chars().count());
            let pad = |line: &mut String| {
                const SPACES: &str = "                                                                ";
                let mut left = fill;
                while left > 0 {
                    let n = left.min(SPACES.len());
                    line.push_str(&SPACES[..n]);
                    left -= n;
                }
            };
            match self.align[i] {
                Align::Left => {
                    self.line.push_str(&self.cell);
                    pad(&mut self.line);
                }
                Align::Right => {
                    pad(&mut self.line);
                    self.line.push_str(&self.cell);
                }
            }
        }
        out.write_all(self.line.trim_end().as_bytes())?;
        out.write_all(b"\n")
    }
}

/// One CSV field. Kernel and op names come from files anyone can write, and a spreadsheet runs
/// a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage return before one) as a
/// formula: `=HYPERLINK(…)` in a kernel name would become a live link, or worse. Such a cell
/// gets a leading `'`, as OWASP recommends, so that it is read as text, unless it is a plain
/// number (`-1.5`, `+3`, `-2e-7`): a number cannot call anything and must stay numeric. Then
/// RFC 4180 quoting: a field with a comma, quote or line break is quoted, and so is one with a
/// semicolon or tab, which spreadsheets in some locales take as the separator (quoted, the
/// field stays whole, so nothing after them can start a cell).
pub fn csv_field(cell: &str) -> Cow<'_, str> {
    let cell: Cow<'_, str> = if starts_like_formula(cell) && !is_plain_number(cell) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    };
    if cell.contains([',', '"', '\n', '\r', ';', '\t']) {
        Cow::Owned(format!("\"{}\"", cell.replace('"', "\"\"")))
    } else {
        cell
    }
}

/// Whether a spreadsheet would read `cell` as a formula (OWASP's list of leading characters).
fn starts_like_formula(cell: &str) -> bool {
    cell.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// A decimal number as Rust prints one, with an optional sign and exponent: `-1.5`, `+3`,
/// `12`, `2.5e-7`, `-1E+9`. Not `-inf`, `NaN`, `1,5` or `-1+2`.
fn is_plain_number(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty()),
        None => !mantissa.is_empty() && digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// One Markdown table cell: `|` escaped, and line breaks (which would end the table row) as
/// `<br>`, which GitHub renders as a break inside the cell.
pub fn markdown_cell(cell: &str) -> Cow<'_, str> {
    if !cell.contains(['|', '\n', '\r']) {
        return Cow::Borrowed(cell);
    }
    Cow::Owned(cell.replace("\r\n", "<br>").replace(['\n', '\r'], "<br>").replace('|', "\\|"))
}

/// Text from a file (a file, kernel or tensor name) in a Markdown line outside a table: the
/// characters Markdown would read as markup are escaped, and line breaks (which would start a
/// heading or a list of the file's making) become spaces, so a name reads as itself.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_text_reads_as_itself() {
        assert_eq!(markdown_text("aten::mm"), "aten::mm");
        assert_eq!(markdown_text("x*y_[z](u)\n# h|<b>"), "x\\*y\\_\\[z\\](u) \\# h\\|\\<b\\>");
    }

    fn sample() -> Table {
        let mut t = Table::new(&["name", ">bytes"]);
        t.row(["a|b", "1"]);
        t.row(["long, name", "12345"]);
        t
    }

    #[test]
    fn text_aligns_numbers_right() {
        assert_eq!(sample().to_text(), "name        bytes\n----------  -----\na|b             1\nlong, name  12345\n");
    }

    #[test]
    fn text_trims_line_ends_and_fills_missing_cells() {
        let mut t = Table::new(&["a", ">b", "c"]);
        t.row(["x", "1"]);
        t.row(["long", "22", "z "]);
        assert_eq!(t.to_text(), "a      b  c\n----  --  --\nx      1\nlong  22  z\n");
        // The same rows streamed.
        let mut layout = TextLayout::new(&["a", ">b", "c"]);
        let rows: [[&dyn fmt::Display; 3]; 2] = [[&"x", &1, &""], [&"long", &22, &"z "]];
        rows.iter().for_each(|r| layout.measure(r));
        let mut out = Vec::new();
        layout.write_header(&mut out).unwrap();
        rows.iter().for_each(|r| layout.write_row(&mut out, r).unwrap());
        assert_eq!(String::from_utf8(out).unwrap(), t.to_text());
    }

    #[test]
    fn markdown_escapes_pipes() {
        assert_eq!(sample().to_markdown(), "| name | bytes |\n|---|---:|\n| a\\|b | 1 |\n| long, name | 12345 |\n");
    }

    #[test]
    fn csv_quotes_commas() {
        assert_eq!(sample().to_csv(), "name,bytes\na|b,1\n\"long, name\",12345\n");
    }

    #[test]
    fn csv_neutralises_formulas_but_keeps_numbers() {
        let cases = [
            ("=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""),
            ("=1+2", "'=1+2"),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-1+A1", "'-1+A1"),
            ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
            ("\t=1", "\"'\t=1\""),
            ("\r=1", "\"'\r=1\""),
            ("-", "'-"),
            ("-inf", "'-inf"),
            ("-1.5", "-1.5"),
            ("+3", "+3"),
            ("-2e-7", "-2e-7"),
            ("-1E+9", "-1E+9"),
            ("-.5", "-.5"),
            ("1.5", "1.5"),
            ("aten::mm", "aten::mm"),
            ("a=b", "a=b"),
            ("x;=1+1", "\"x;=1+1\""),
            ("", ""),
        ];
        for (cell, want) in cases {
            assert_eq!(csv_field(cell), want, "{cell:?}");
        }
        for not_number in ["-", "+", "-.", "-e5", "-1e", "-1.2.3", "-1,5", "--1", "-1e+-2", "- 1"] {
            assert!(!is_plain_number(not_number), "{not_number:?}");
        }
    }

    #[test]
    fn markdown_escapes_line_breaks() {
        assert_eq!(markdown_cell("a\nb\r\nc\rd|e"), "a<br>b<br>c<br>d\\|e");
        assert_eq!(markdown_cell("a\nb"), "a<br>b");
        assert_eq!(markdown_cell("plain"), "plain");
        let mut t = Table::new(&["name"]);
        t.row(["x\n| y |"]);
        assert_eq!(t.to_markdown().lines().count(), 3, "{}", t.to_markdown());
    }

    proptest::proptest! {
        /// Whatever the cell, the CSV field is read back (RFC 4180) as the cell, or as `'` and
        /// the cell, and never starts with a formula character unless it is a number.
        #[test]
        fn csv_fields_round_trip_and_never_start_a_formula(cell in "[-=+@\t\r\n,;\"' a-z0-9.eE|]{0,12}") {
            let field = csv_field(&cell);
            let unquoted = match field.strip_prefix('"') {
                Some(inner) => inner.strip_suffix('"').unwrap().replace("\"\"", "\""),
                None => field.to_string(),
            };
            let prefixed = format!("'{}", cell);
            proptest::prop_assert!(unquoted == cell || unquoted == prefixed, "{:?} → {:?}", cell, field);
            proptest::prop_assert!(!starts_like_formula(&unquoted) || is_plain_number(&unquoted), "{:?}", field);
        }

        /// A Markdown row stays one line with as many cells as the table has columns.
        #[test]
        fn markdown_rows_stay_whole(cell in "[-|\\\\\n\r a-z]{0,12}") {
            let mut t = Table::new(&["a", "b"]);
            t.row([cell.as_str(), "x"]);
            let md = t.to_markdown();
            let row = md.lines().nth(2).unwrap();
            proptest::prop_assert_eq!(md.lines().count(), 3);
            let unescaped_pipes = row.match_indices('|').filter(|(i, _)| !row[..*i].ends_with('\\')).count();
            proptest::prop_assert_eq!(unescaped_pipes, 3);
        }
    }
}
