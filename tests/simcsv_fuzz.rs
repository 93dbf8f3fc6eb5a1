//! The simulator-table reader never panics: random text, random bytes as text, truncated tables.

use fusionscope::simcsv::parse_sim_csv;
use proptest::prelude::*;

const LLAMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/ops-csv/llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128_decode.csv"
));

proptest! {
    #[test]
    fn random_text_never_panics(s in "[\\PC\\n\",]*") {
        let _ = parse_sim_csv(&s);
    }

    #[test]
    fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = parse_sim_csv(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn truncated_tables_never_panic(cut in 0usize..LLAMA.len()) {
        // A cut inside a record gives a field-count or quote error; at a line end, fewer rows.
        match parse_sim_csv(&LLAMA[..cut]) {
            Ok(t) => prop_assert!(t.rows.len() <= 16),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn a_mangled_cell_is_reported_not_panicked(row in 1usize..17, col in 0usize..10, junk in "[a-z-]{1,5}") {
        let mut lines: Vec<String> = LLAMA.lines().map(String::from).collect();
        let mut fields: Vec<String> = lines[row].split(',').map(String::from).collect();
        if col < fields.len() {
            fields[col] = junk;
        }
        lines[row] = fields.join(",");
        let _ = parse_sim_csv(&lines.join("\n"));
    }
}
