//! Inputs made to hurt: absurd numbers in chips, sizes whose sums pass 2^64, share links that
//! inflate far or hold more than a link may. Each goes in as a user or a stranger's link would
//! bring it — a file through the command line where there is one, a link through the page's
//! [`State::from_fragment`] — and must come back as a clear error naming what is wrong (or a
//! right answer), fast, never as a hang, a panic or a wrapped figure. No test times itself: a
//! slow path would make the suite time out.

use std::io::Write;

use crate::common::{run, temp_dir};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use fusionscope::page::{Source, State};

/// The unfused total of the page's default block (S = 2048, H = 4096, NH = 32): the page shows
/// it after a link that cannot be opened.
const DEFAULT_TOTAL: u64 = 2_348_810_240;

/// A link fragment holding `json` as its state, in format `version`, as a hand-made link would.
fn link(json: &str, version: u32) -> String {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(json.as_bytes()).unwrap();
    format!("#s={version}.{}", URL_SAFE_NO_PAD.encode(enc.finish().unwrap()))
}

/// The page a link opens, asserting it fell back to the default block with a notice containing
/// every fragment; returns the notice.
#[track_caller]
fn refused(fragment: &str, fragments: &[&str]) -> String {
    let s = State::from_fragment(fragment);
    let notice = s.notice.as_ref().expect("a notice says why the link cannot be opened").text.clone();
    assert!(notice.starts_with("This share link cannot be opened: "), "{notice}");
    for f in fragments {
        assert!(notice.contains(f), "missing {f:?} in {notice}");
    }
    assert!(matches!(s.source, Source::Transformer(_)), "the default block is shown");
    assert_eq!(s.shown().expect("the default block is analysed").report.unfused.total, DEFAULT_TOTAL);
    notice
}

/// Runs the CLI and asserts exit code 2, nothing on stdout and one line on stderr containing
/// every fragment; returns the line.
#[track_caller]
fn cli_refuses(args: &[&str], fragments: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{args:?}: {stdout}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for f in fragments {
        assert!(stderr.contains(f), "{args:?}: missing {f:?} in {stderr}");
    }
    stderr
}

const BLOCK: &str =
    r#"{"view": "transformer", "config": {"seq_len": 2048, "hidden_dim": 4096, "num_heads": 32, "dtype_bytes": 2}}"#;

mod chips {
    use super::*;

    fn chip_link(peak: &str, bandwidth: &str, launch: &str, name: &str) -> String {
        link(
            &format!(
                r#"{{"v": 2, "state": {BLOCK}, "chip": {{"custom": {{"name": "{name}", "peak_flops": {peak},
                    "hbm_bandwidth": {bandwidth}, "launch_overhead_us": {launch}, "source": "a link"}}}}}}"#
            ),
            2,
        )
    }

    /// The chips that once hung the page (the roofline's decade loop ran ~2^31 times) are
    /// refused when the link is read; the notice names the field and the range.
    #[test]
    fn absurd_chips_in_a_link_are_refused_naming_the_field() {
        for (peak, shown) in [("1e308", "1e308"), ("1e-320", "1e-320"), ("-5", "-5"), ("0", "0")] {
            refused(
                &chip_link(peak, "3.35e12", "2", "evil"),
                &[&format!("chip field `peak_flops` is {shown}, outside the accepted range 1e6 to 1e21 FLOP/s")],
            );
        }
        refused(
            &chip_link("1e15", "1e300", "2", "evil"),
            &["chip field `hbm_bandwidth` is 1e300, outside the accepted range 1e6 to 1e17 bytes/s"],
        );
        refused(
            &chip_link("1e15", "3e12", "1e12", "evil"),
            &["chip field `launch_overhead_us` is 1e12, outside the accepted range 0 to 1e6 µs"],
        );
        refused(
            &chip_link("1e15", "3e12", "2", ""),
            &["chip field `name` is 0 characters long; it must have 1 to 200"],
        );
        refused(&chip_link("1e15", "3e12", "2", &"n".repeat(5000)), &["chip field `name` is 5000 characters long"]);
        // JSON has no NaN or infinity: such a chip is not even a state.
        refused(&chip_link("NaN", "3e12", "2", "evil"), &["is not what format 2 holds"]);
        // A sane custom chip opens and is chosen.
        let s = State::from_fragment(&chip_link("1e15", "3e12", "2", "mine"));
        assert!(s.notice.is_none(), "{:?}", s.notice);
        assert_eq!(s.time.chip().unwrap().peak_flops, 1e15);
    }

    #[test]
    fn an_edited_preset_name_is_quoted_short() {
        let name = "x".repeat(20_000);
        let json = format!(r#"{{"v": 2, "state": {BLOCK}, "chip": {{"preset": "{name}"}}}}"#);
        refused(
            &link(&json, 2),
            &["the link's chip preset \"xxx", "has 20,000 characters; a link holds at most 16,384"],
        );
    }

    fn chip_file(dir: &std::path::Path, name: &str, json: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, json).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// The same chips as files: refused by the command line, naming the file and the field.
    #[test]
    fn absurd_chip_files_are_refused_naming_the_field() {
        let dir = temp_dir("hostile-chips");
        let cases = [
            (r#"{"name": "x", "peak_flops": 1e308, "hbm_bw_GBps": 3350}"#, "chip field `peak_flops` is 1e308"),
            (r#"{"name": "x", "peak_flops": 1e-320, "hbm_bw_GBps": 3350}"#, "chip field `peak_flops` is 1e-320"),
            (r#"{"name": "x", "peak_flops": 1e15, "hbm_bw_GBps": 1e-9}"#, "chip field `hbm_bw_GBps` is 1e-9"),
            (
                r#"{"name": "x", "peak_flops": 1e15, "hbm_bw_GBps": 3350, "launch_overhead_us": -1}"#,
                "`launch_overhead_us` is -1",
            ),
            (r#"{"num_sa": 1e300, "sa_dim": 128, "freq_GHz": 1, "hbm_bw_GBps": 600}"#, "(peak FLOP/s)` is inf"),
            (r#"{"name": "x", "peak_flops": NaN, "hbm_bw_GBps": 3350}"#, "chip JSON is malformed"),
        ];
        for (i, (json, fragment)) in cases.iter().enumerate() {
            let file = chip_file(&dir, &format!("chip{i}.json"), json);
            cli_refuses(&["model", "--model", "llama3-8b", "--chip", &file], &[&file, fragment]);
        }
        cli_refuses(
            &["model", "--model", "llama3-8b", "--chip", "h100", "--launch-us", "1e300"],
            &["--launch-us: chip field `launch_overhead_us` is 1e300, outside the accepted range 0 to 1e6 µs"],
        );
    }
}

mod sizes {
    use super::*;

    const S: &str = "2147483648"; // 2^31
    const H: &str = "268435456"; // 2^28

    /// S = 2^31, H = 2^28: every tensor fits in 64 bits with one head (the scores are 2^63
    /// bytes), but the traffic does not. The totals used to wrap and be printed as if right.
    #[test]
    fn a_transformer_whose_traffic_overflows_is_an_error() {
        let line = cli_refuses(
            &["transformer", "--seq-len", S, "--hidden", H, "--heads", "1", "--json"],
            &["the graph is too large: its memory traffic passes 2^64 bytes at op \"split_v\""],
        );
        assert!(line.starts_with("fusionscope: "), "{line}");
        // With 32 heads the scores alone overflow: the tensor is named.
        cli_refuses(
            &["transformer", "--seq-len", S, "--hidden", H, "--heads", "32"],
            &["tensor \"scores\" is too large: its size in bytes does not fit in 64 bits"],
        );
        // H so large that 4H itself overflows.
        cli_refuses(
            &["transformer", "--seq-len", "1", "--hidden", "4611686018427387904", "--heads", "1"],
            &["the block is too large: the FFN width = 4 × 4611686018427387904 does not fit in 64 bits"],
        );
    }

    /// The same block from a link: the page shows the error in place of figures, never a
    /// wrapped total.
    #[test]
    fn a_transformer_link_whose_traffic_overflows_shows_the_error() {
        let json = format!(
            r#"{{"v": 2, "state": {{"view": "transformer", "config": {{"seq_len": {S}, "hidden_dim": {H}, "num_heads": 1, "dtype_bytes": 2}}}}}}"#
        );
        let s = State::from_fragment(&link(&json, 2));
        assert!(s.notice.is_none(), "the link itself is fine: {:?}", s.notice);
        let e = s.current.as_ref().unwrap_err();
        assert!(
            e.starts_with("These inputs cannot be analysed: the graph is too large: its memory traffic passes 2^64"),
            "{e}"
        );
        assert!(s.shown().is_none(), "no figures are shown for it");
    }

    /// A graph file of four ops of 2^62 bytes each: every size fits, the traffic does not.
    #[test]
    fn a_graph_file_whose_traffic_overflows_names_the_op() {
        let dir = temp_dir("hostile-graph");
        let path = dir.join("huge.json");
        let op = |name: &str, input: &str, output: &str| {
            format!(
                r#"{{"name": "{name}", "op_type": "elementwise", "inputs": ["{input}"], "output": "{output}", "shape": [4611686018427387904], "bytes_per_element": 1}}"#
            )
        };
        let json = format!("[{}, {}]", op("a", "x", "y"), op("b", "y", "z"));
        std::fs::write(&path, &json).unwrap();
        let file = path.to_string_lossy().into_owned();
        cli_refuses(&["graph", &file, "--json"], &[&file, "memory traffic passes 2^64 bytes at op \"b\""]);
        // The same graph in a link: the page says the graph is not valid and shows the default.
        let state = format!(
            r#"{{"v": 2, "state": {{"view": "graph", "file_name": "huge.json", "graph": {{"ops": {json}}}}}}}"#
        );
        let s = State::from_fragment(&link(&state, 2));
        let notice = s.notice.as_ref().unwrap().text.clone();
        assert!(
            notice.starts_with("This share link holds a graph that is not valid: the graph is too large"),
            "{notice}"
        );
        assert_eq!(s.shown().unwrap().report.unfused.total, DEFAULT_TOTAL);
    }

    /// A model whose every tensor and traffic fit but whose FLOPs do not (d_model = 2^31 makes
    /// K huge): refused naming the op, where the count used to be capped at 2^64 − 1.
    #[test]
    fn a_model_whose_flops_overflow_names_the_op() {
        let dir = temp_dir("hostile-model");
        let path = dir.join("big.json");
        std::fs::write(
            &path,
            r#"{"model_type": "llm", "model_name": "big", "d_model": 2147483648, "num_heads": 1, "d_head": 1,
                "d_ff": 1048576, "num_layers": 1}"#,
        )
        .unwrap();
        let file = path.to_string_lossy().into_owned();
        cli_refuses(
            &["model", "--model", &file, "--chip", "h100", "--batch", "1024", "--seq-len", "1024"],
            &["the workload is too large: op \"layer0.gate_proj\" does more FLOPs (2 · M · N · K) than 64 bits can count"],
        );
    }

    /// 2^31 routed experts would be billions of ops: refused at once, from a file or a link.
    #[test]
    fn a_model_with_billions_of_experts_is_refused() {
        let config = r#"{"model_type": "llm", "model_name": "moe", "d_model": 64, "num_heads": 4, "d_head": 16,
            "d_ff": 128, "num_layers": 2, "ffn_type": "deepseek_moe", "moe_d_ff": 32, "num_routed_experts": 2147483648,
            "num_activated_routed_experts_per_token": 2}"#;
        let dir = temp_dir("hostile-experts");
        let path = dir.join("moe.json");
        std::fs::write(&path, config).unwrap();
        let file = path.to_string_lossy().into_owned();
        let fragment =
            "num_routed_experts 2147483648 over tp 1 is 2147483648 experts per chip; at most 4096 are modelled";
        cli_refuses(&["model", "--model", &file, "--chip", "h100"], &[fragment]);
        let text = serde_json::to_string(config).unwrap();
        let json = format!(
            r#"{{"v": 2, "state": {{"view": "model", "spec": {{"model": {{"file": {{"file_name": "moe.json", "text": {text}}}}}, "phase": "prefill"}}}}}}"#
        );
        let s = State::from_fragment(&link(&json, 2));
        assert!(s.notice.is_none(), "{:?}", s.notice);
        assert!(s.current.as_ref().unwrap_err().contains(fragment), "{:?}", s.current.as_ref().err());
    }

    /// An op trace whose operand has a dimension above 2^63 − 1 (it fits in u64 but not in a
    /// graph file): named, where it used to be capped silently.
    #[test]
    fn an_op_trace_dimension_past_i64_is_named() {
        let dir = temp_dir("hostile-optrace");
        let path = dir.join("huge.optrace");
        std::fs::write(&path, "0:0:0 %2:<4xi8> = n.1.add(%1:<9223372036854775809xi8>, %0:<4xi8>)\n").unwrap();
        let file = path.to_string_lossy().into_owned();
        cli_refuses(&["optrace", &file], &["tensor %1 on line 1 has a dimension above 2^63 - 1"]);
    }
}

mod links {
    use super::*;
    use fusionscope::limits::{SHARED_GRAPH_OPS, SHARED_OPTRACE_BYTES, SHARE_STATE_BYTES};

    /// A few KB of link that inflates to 2 MiB (a valid state padded with spaces): refused with
    /// the limit named, before any of it is read.
    #[test]
    fn a_link_inflating_to_2_mib_is_refused() {
        let json = format!(r#"{{"v": 2, "state": {BLOCK}}}{}"#, " ".repeat(2 << 20));
        let fragment = link(&json, 2);
        assert!(fragment.len() < 8 * 1024, "{} bytes", fragment.len());
        refused(&fragment, &["the link's state is more than 1 MiB of JSON"]);
        // Just under the limit, the same state opens.
        let json = format!(r#"{{"v": 2, "state": {BLOCK}}}{}"#, " ".repeat(SHARE_STATE_BYTES - 200));
        assert!(State::from_fragment(&link(&json, 2)).notice.is_none());
    }

    #[test]
    fn an_op_trace_over_the_link_limit_is_refused() {
        let text = "0:0:0 %1:<4xf16> = n.1.gelu(%0:<4xf16>)\n".repeat(SHARED_OPTRACE_BYTES / 40 + 1);
        let json = serde_json::json!({"v": 2, "state": {"view": "op_trace", "file_name": "big.optrace", "text": text}});
        refused(&link(&json.to_string(), 2), &["the link's op trace text has", "a link holds at most 65,536"]);
    }

    #[test]
    fn a_graph_over_the_op_limit_is_refused() {
        let ops: Vec<_> = (0..=SHARED_GRAPH_OPS)
            .map(|i| serde_json::json!({"name": format!("o{i}"), "op_type": "elementwise", "output": format!("t{i}"), "shape": [], "bytes_per_element": 1}))
            .collect();
        let json =
            serde_json::json!({"v": 2, "state": {"view": "graph", "file_name": "g.json", "graph": {"ops": ops}}});
        refused(&link(&json.to_string(), 2), &["the link's graph has 5,001 ops; a link holds at most 5,000"]);
    }

    #[test]
    fn a_view_from_a_newer_version_and_garbage_still_leave_the_page_usable() {
        refused(
            &link(r#"{"v": 2, "state": {"view": "teapot"}}"#, 2),
            &["made by a newer version of fusionscope (format 2"],
        );
        refused(&link("[[[[[[[[", 2), &["is not what format 2 holds"]);
        refused(&link(r#"{"v": 2, "state": {"view": "graph", "file_name": 7}}"#, 2), &["is not what format 2 holds"]);
        refused("#s=2.", &["its data does not inflate"]);
    }
}
