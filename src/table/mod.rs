//! Tables: [`Table`], plain rows as the command line prints them and the page exports them
//! (aligned text, Markdown for pasting into a review, CSV); [`DataTable`], the page's tables of
//! results with sortable, filterable cells; [`window`], which rows of a long table are drawn.

mod data;
pub mod window;

pub use data::{Cell, Column, DataTable, SortBy};

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

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        w
    }

    fn pad(cell: &str, width: usize, align: Align) -> String {
        let fill = " ".repeat(width.saturating_sub(cell.chars().count()));
        match align {
            Align::Left => format!("{cell}{fill}"),
            Align::Right => format!("{fill}{cell}"),
        }
    }

    /// Aligned columns separated by two spaces, a rule under the header.
    pub fn to_text(&self) -> String {
        let w = self.widths();
        let line = |cells: &[String]| {
            let s: Vec<String> = cells.iter().enumerate().map(|(i, c)| Self::pad(c, w[i], self.align[i])).collect();
            s.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(&self.headers);
        out.push_str(&(w.iter().map(|&n| "-".repeat(n)).collect::<Vec<_>>().join("  ") + "\n"));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// GitHub-flavoured Markdown; `|` in cells is escaped.
    pub fn to_markdown(&self) -> String {
        let esc = |c: &str| c.replace('|', "\\|");
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

    /// RFC 4180 CSV: fields with commas, quotes or line breaks are quoted.
    pub fn to_csv(&self) -> String {
        let field = |c: &str| {
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_string()
            }
        };
        let mut out = String::new();
        for r in std::iter::once(&self.headers).chain(&self.rows) {
            out.push_str(&r.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn markdown_escapes_pipes() {
        assert_eq!(sample().to_markdown(), "| name | bytes |\n|---|---:|\n| a\\|b | 1 |\n| long, name | 12345 |\n");
    }

    #[test]
    fn csv_quotes_commas() {
        assert_eq!(sample().to_csv(), "name,bytes\na|b,1\n\"long, name\",12345\n");
    }
}
