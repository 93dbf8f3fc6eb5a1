//! What every subcommand shares: its result type, the `--json` flag, reading input files
//! (naming the file in any error) and writing to stdout (a closed pipe ends quietly).

use std::io::Write;

use limits::WHOLE_FILE_TEXT_BYTES;

/// What a subcommand returns: nothing on success, or an error whose `Display` is one line.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;

/// `--json`, shared by the subcommands that print tables: `#[command(flatten)]` it after the
/// subcommand's own input argument(s), which keep their per-subcommand help. (`simcsv` and
/// `model` have their own `--json`: its help says what their JSON holds.)
#[derive(clap::Args)]
pub struct Output {
    /// Print the machine-readable result instead of tables
    #[arg(long)]
    pub json: bool,
}

/// Writes `text` to stdout; a closed pipe surfaces as an `io::Error` that `main` ends quietly on.
pub fn print(text: &str) -> CliResult {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Reads a whole text file, plain or gzip-compressed, held to the budget of a file read whole
/// ([`WHOLE_FILE_TEXT_BYTES`], as the page is); the error names the file.
pub fn read_text(path: &std::path::Path) -> Result<String, Box<dyn std::error::Error>> {
    let size = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?.len();
    // A compressed file cannot inflate to less than it is; one this large is over any budget.
    if size > WHOLE_FILE_TEXT_BYTES as u64 {
        let e = import::ImportError::TooLarge { limit: WHOLE_FILE_TEXT_BYTES };
        return Err(format!("{}: {e}", path.display()).into());
    }
    let bytes = read_file(path)?;
    let named = |e: import::ImportError| format!("{}: {e}", path.display());
    if !import::detect(&bytes[..bytes.len().min(2)]).gzipped {
        // Plain text is checked in place rather than copied (a 127 MB graph file is 127 MB
        // less to copy, fault in and free).
        return String::from_utf8(bytes)
            .map_err(|e| named(import::ImportError::NotUtf8 { offset: e.utf8_error().valid_up_to() }).into());
    }
    let text = import::text(&bytes, WHOLE_FILE_TEXT_BYTES).map_err(named)?;
    Ok(text.into_owned())
}

/// Reads a text file and parses it with `parse`, naming the file in any error.
pub fn read_parsed<T, E: std::fmt::Display>(
    path: &std::path::Path,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, Box<dyn std::error::Error>> {
    parse(&read_text(path)?).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Prints `value` as pretty JSON followed by a newline.
pub fn print_json(value: &impl serde::Serialize) -> CliResult {
    print(&(serde_json::to_string_pretty(value)? + "\n"))
}

/// Reads a whole file, naming it in the error.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()).into())
}

/// `--chip NAME|FILE`: a chip file when the path exists, else a preset name.
pub fn load_chip(arg: &str) -> Result<hardware::Chip, Box<dyn std::error::Error>> {
    use hardware::{parse_chip, preset, preset_names};
    let path = std::path::Path::new(arg);
    if path.exists() {
        read_parsed(path, parse_chip)
    } else {
        preset(arg).map_err(|_| {
            format!("--chip {arg}: no such file, and not a chip preset ({})", preset_names().join(", ")).into()
        })
    }
}
