//! The XLA profiles' bytes against a second reader: xprof's HLO op profile of the same files
//! (tests/data/reference/xprof/op_profile.json, made by scripts/xprof-reference), which counts
//! each op's bytes accessed with XLA's own cost analysis.

use crate::common::{data, data_text, json};

/// Every fusion of each profile that xprof's op profile lists: fusionscope's calls are its
/// occurrences and its bytes per call are xprof's within 2 % (they are equal on these files).
/// Custom calls are printed, not compared: xprof counts a cuDNN convolution's operands only
/// (the MI300X profile's 7,045,120 B are its input and filter), where fusionscope counts what
/// the kernels read and write: operands, output and workspace.
#[test]
fn every_fusion_moves_the_bytes_xprofs_op_profile_gives() {
    let reference: serde_json::Value = serde_json::from_str(&data_text("reference/xprof/op_profile.json")).unwrap();
    let mut compared = 0;
    for (rel, ops) in reference["profiles"].as_object().unwrap() {
        let v = json(&["trace", &data(rel), "--json"]);
        let ours = v["ops"].as_array().unwrap();
        for (key, x) in ops.as_object().unwrap() {
            let name = key.rsplit('/').next().unwrap();
            let occurrences = x["occurrences"].as_f64().unwrap();
            let theirs = x["bytes_accessed"].as_f64().unwrap() / occurrences;
            let row = ours.iter().find(|o| o["op"] == name).unwrap_or_else(|| panic!("{rel}: no op row {name}"));
            let bytes = row["bytes_per_call"].as_f64().unwrap();
            println!("{rel} {name}: fusionscope {bytes} B a call, xprof {theirs:.0} B ({})", x["category"]);
            if x["category"] == "custom-call" {
                continue;
            }
            assert_eq!(row["calls"].as_f64(), Some(occurrences), "{rel} {name}");
            assert!((bytes - theirs).abs() <= 0.02 * theirs, "{rel} {name}: {bytes} vs {theirs}");
            compared += 1;
        }
    }
    // The MI300X profile's three fusions and the H200 convnet's six.
    assert_eq!(compared, 9);
}
