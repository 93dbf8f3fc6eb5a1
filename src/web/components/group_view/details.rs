//! The side panel of the group view: the selected op (its tensors, their sizes and the rule
//! that placed it) or the selected group (its traffic, neighbours and ops).

use yew::prelude::*;

use super::drawing::Drawing;
use fusion::graph::SizeSource;
use fusion::tables::kind_name;
use fusion::{AnalysisReport, OpGraph, OpId, TensorId};
use units::{format_bytes, group_digits, plural};
/// A group: its traffic, the groups it reads from and feeds, and every op (each selectable).
pub(super) fn group_details(
    d: &Drawing,
    r: &AnalysisReport,
    g: usize,
    select_group: Callback<Option<usize>>,
    select_op: Callback<usize>,
) -> Html {
    let detail = &r.group_details[g];
    let kind = kind_name(detail.kind);
    let links = |gs: &[usize]| -> Html {
        if gs.is_empty() {
            return html! { { "none" } };
        }
        gs.iter()
            .map(|&o| {
                let select_group = select_group.clone();
                html! { <button type="button" class="link" onclick={move |_| select_group.emit(Some(o))}>{ format!("group {}", o + 1) }</button> }
            })
            .collect()
    };
    let close = select_group.clone();
    html! {
        <section class="op-details" aria-live="polite" data-testid="group-details" aria-label={format!("Details of group {}", g + 1)}>
            <div class="op-details-head">
                <h3>{ format!("Group {} ({kind}), {}", g + 1, plural(detail.ops.len() as u64, "op", "ops")) }</h3>
                <button type="button" onclick={move |_| close.emit(None)} aria-label="Close the group details">{ "×" }</button>
            </div>
            <p>{ format!("Unfused {}; fused {} (read {}, written {}); fusion saves {}.",
                format_bytes(detail.unfused.total), format_bytes(detail.fused.total), format_bytes(detail.fused.bytes_read),
                format_bytes(detail.fused.bytes_written), format_bytes(detail.fused.saved_by_fusion)) }</p>
            <p class="group-links">{ "Reads from: " }{ links(&d.groups.preds[g]) }</p>
            <p class="group-links">{ "Feeds: " }{ links(&d.groups.succs[g]) }</p>
            <ol class="group-op-list">
                { for d.members[g].iter().map(|&i| {
                    let od = &r.op_details[i];
                    let select_op = select_op.clone();
                    html! {
                        <li>
                            <button type="button" class="link" onclick={move |_| select_op.emit(i)}>{ od.name.clone() }</button>
                            { format!(" ({}) — {}", od.op_type.as_str(), od.reason) }
                        </li>
                    }
                }) }
            </ol>
        </section>
    }
}

fn tensor_row(graph: &OpGraph, t: TensorId, role: &str) -> Html {
    let tensor = graph.tensor(t);
    let source = match tensor.size_source {
        SizeSource::Produced => {
            format!("output of {}", tensor.producer.map(|p| graph.op(p).name.as_str()).unwrap_or("?"))
        }
        SizeSource::Declared => "declared in the file".to_string(),
        SizeSource::Assumed => "assumed: not produced or declared, sized like its first reader's output".to_string(),
        SizeSource::Unused => "unused".to_string(),
    };
    html! {
        <tr>
            <td>{ role.to_string() }</td>
            <td><code>{ tensor.name.clone() }</code></td>
            <td class="num">{ format_bytes(tensor.size_bytes) }<br /><small>{ format!("{} bytes", group_digits(tensor.size_bytes)) }</small></td>
            <td>{ source }</td>
        </tr>
    }
}

pub(super) fn op_details(
    graph: &OpGraph,
    report: &AnalysisReport,
    i: usize,
    on_select: Callback<Option<usize>>,
) -> Html {
    let op = graph.op(OpId(i as u32));
    let d = &report.op_details[i];
    let shape: Vec<String> = op.shape.iter().map(|x| x.to_string()).collect();
    html! {
        <section class="op-details" aria-live="polite" data-testid="op-details" aria-label={format!("Details of op {}", op.name)}>
            <div class="op-details-head">
                <h3>{ format!("{} ({}) — group {}", op.name, op.op_type, d.group + 1) }</h3>
                <button type="button" onclick={Callback::from(move |_| on_select.emit(None))} aria-label="Close the op details">{ "×" }</button>
            </div>
            <p class="reason" data-testid="op-reason"><strong>{ "Why here: " }</strong>{ d.reason.clone() }</p>
            <p class="hint">{ format!("Output shape [{}], {} byte{} per element.", shape.join(", "), op.bytes_per_element, if op.bytes_per_element == 1 { "" } else { "s" }) }</p>
            <div class="table-wrap"><table class="tensors">
                <caption>{ "Tensors" }</caption>
                <thead><tr><th scope="col">{ "role" }</th><th scope="col">{ "tensor" }</th><th scope="col" class="num">{ "size" }</th><th scope="col">{ "size from" }</th></tr></thead>
                <tbody>
                    { for op.inputs.iter().map(|&t| tensor_row(graph, t, "input")) }
                    { tensor_row(graph, op.output, "output") }
                </tbody>
            </table></div>
        </section>
    }
}
