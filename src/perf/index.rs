//! `aten::index(self, indices)`: a gather by a list of index tensors (`x[idx]`, `x[mask]`).
//! Its traffic is the output's size, which the trace never gives: the list's shapes are recorded
//! as `[]` by the profilers these traces come from, and where they are recorded their element
//! type is not, so an index list of masks (bool, whose output size depends on how many are
//! true) cannot be told from one of positions (int64). The op is known, and its refusal says
//! which of the two the trace lacks, so that its time counts as not recorded, not as an op
//! with no model.

use super::args::{Input, List, OpArgs};
use super::cost::OpCost;
use super::error::NoCost;

pub fn index(args: &OpArgs) -> Result<OpCost, NoCost> {
    args.tensor(0, "the tensor indexed")?;
    match args.input(1) {
        Some(Input::List(List::Tensors(shapes))) if !shapes.is_empty() => Err(NoCost::ListDType { input: 1 }),
        // A list recorded as `[]` with no type reads as an absent input.
        Some(Input::List(List::Tensors(_)) | Input::Absent) => Err(NoCost::ListShapes { input: 1 }),
        other => {
            Err(NoCost::Input { input: 1, expected: "a tensor list", found: other.map_or("absent", Input::kind_name) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op_cost;

    #[test]
    fn an_index_says_what_the_trace_lacks() {
        // vLLM's decode capture (tests/data/traces/amd/vllm_decode_graph_full_capture.json.gz):
        // the index list recorded as `[]`.
        let a = OpArgs::recorded("[[32, 2880], []]", r#"["c10::BFloat16", ""]"#);
        assert_eq!(op_cost("aten::index", &a).err(), Some(NoCost::ListShapes { input: 1 }));
        let a = OpArgs::recorded("[[32, 2880], [[32]]]", r#"["c10::BFloat16", "TensorList"]"#);
        assert_eq!(op_cost("aten::index", &a).err(), Some(NoCost::ListDType { input: 1 }));
    }
}
