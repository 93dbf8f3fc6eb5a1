//! A small RFC 4180 CSV reader: comma-separated fields, `"`-quoted fields with `""` escapes and
//! line breaks inside quotes, LF or CRLF record ends. Each record keeps the line it starts on.
//!
//! One pass over the characters, each looked at once, and held to the budgets of
//! [`limits`] as it reads: a header and at most [`SIM_CSV_ROWS`] rows, at most
//! [`SIM_CSV_FIELDS`] fields a record. The first record over a budget is the error, so a
//! crafted table fails at that line without the rest being read.

use super::error::SimCsvError;
use limits::{SIM_CSV_FIELDS, SIM_CSV_ROWS};

/// One record and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub line: usize,
    pub fields: Vec<String>,
}

/// Splits `text` into records. Blank lines are skipped; a quote left open is an error naming
/// the line where its field starts, and so is a record over a budget (see the module docs).
pub fn read_records(text: &str) -> Result<Vec<Record>, SimCsvError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut line = 1usize;
    let mut record_line = 1usize;
    let mut quote_line = 0usize;
    let mut in_quotes = false;
    let mut after_quote = false;
    let mut chars = text.chars().peekable();
    let end_record = |fields: &mut Vec<String>, field: &mut String, records: &mut Vec<Record>, at: usize| {
        fields.push(std::mem::take(field));
        let f = std::mem::take(fields);
        if !(f.len() == 1 && f[0].is_empty()) {
            // The header, then the rows.
            if records.len() > SIM_CSV_ROWS {
                return Err(SimCsvError::TooManyRows { line: at, limit: SIM_CSV_ROWS });
            }
            records.push(Record { line: at, fields: f });
        }
        Ok(())
    };
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => {
                    in_quotes = false;
                    after_quote = true;
                }
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() && !after_quote => {
                in_quotes = true;
                quote_line = line;
            }
            ',' => {
                // The comma starts field `fields.len() + 2` of the record.
                if fields.len() + 1 >= SIM_CSV_FIELDS {
                    return Err(SimCsvError::TooManyFields { line, limit: SIM_CSV_FIELDS });
                }
                fields.push(std::mem::take(&mut field));
                after_quote = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                end_record(&mut fields, &mut field, &mut records, record_line)?;
                after_quote = false;
                line += 1;
                record_line = line;
            }
            // Text after a closing quote (`"a"b`) is kept, as most readers do.
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(SimCsvError::UnterminatedQuote { line: quote_line });
    }
    if !field.is_empty() || !fields.is_empty() {
        end_record(&mut fields, &mut field, &mut records, record_line)?;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_commas_and_line_breaks() {
        let r = read_records("a,b,c\r\n1,\"x, \"\"y\"\"\",3\n\n2,\"multi\nline\",4").unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[1].fields, ["1", "x, \"y\"", "3"]);
        assert_eq!(r[2].line, 4);
        assert_eq!(r[2].fields, ["2", "multi\nline", "4"]);
    }

    #[test]
    fn open_quote_names_its_line() {
        assert_eq!(read_records("a\n\"open,\n").unwrap_err(), SimCsvError::UnterminatedQuote { line: 2 });
    }

    #[test]
    fn a_record_over_the_field_budget_names_its_line() {
        let fields = |n: usize| vec!["x"; n].join(",");
        let at_budget = format!("a\n{}\n", fields(SIM_CSV_FIELDS));
        assert_eq!(read_records(&at_budget).unwrap()[1].fields.len(), SIM_CSV_FIELDS);
        // In a quoted field the line is where the field over the budget starts.
        let over = format!("a\n\"b\nc\",{}\n", fields(SIM_CSV_FIELDS));
        let e = read_records(&over).unwrap_err();
        assert_eq!(e, SimCsvError::TooManyFields { line: 3, limit: SIM_CSV_FIELDS });
        assert_eq!(
            e.to_string(),
            "line 3: more than 1,000 fields in one record, the budget of a simulator table (real tables have 70 columns)"
        );
    }

    #[test]
    fn trailing_empty_field_is_kept() {
        assert_eq!(read_records("a,").unwrap()[0].fields, ["a", ""]);
    }
}
