//! The fusion groups as boxes of ops, row by row in data-flow order. Each op is a button: selecting it (click, or Enter/Space
//! on the keyboard) shows its tensors, their sizes and the rule that put it in its group;
//! hovering shows the rule as a tooltip.

use std::collections::HashMap;
use yew::prelude::*;

use crate::web::shared::Shared;

use crate::fusion::graph::SizeSource;
use crate::fusion::{AnalysisReport, OpGraph, OpId, TensorId};
use crate::group_graph::group_graph;
use crate::units::{format_bytes, group_digits};

/// Op buttons drawn at most (whole groups; a first group larger than this is cut): past this
/// the page stays responsive, and the exports carry every op.
pub const MAX_OPS_DRAWN: usize = 2000;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub graph: Shared<OpGraph>,
    pub report: Shared<AnalysisReport>,
    pub selected: Option<usize>,
    pub on_select: Callback<Option<usize>>,
}

#[function_component(GroupView)]
pub fn group_view(props: &Props) -> Html {
    let r = &props.report;
    // Recomputed only for a new analysis, not when the selection changes.
    let layout = use_memo((props.graph.clone(), props.report.clone()), |(graph, report)| {
        let op_group: Vec<usize> = report.op_details.iter().map(|d| d.group).collect();
        let index: HashMap<&str, usize> =
            report.op_details.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
        let members: Vec<Vec<usize>> = report
            .group_details
            .iter()
            .map(|g| g.ops.iter().filter_map(|name| index.get(name.as_str()).copied()).collect())
            .collect();
        (group_graph(graph, &op_group), members)
    });
    let (layers, members) = &*layout;
    let names = |gs: &[usize]| gs.iter().map(|g| (g + 1).to_string()).collect::<Vec<_>>().join(", ");
    let group_box = |g: usize| {
        let detail = &r.group_details[g];
        let kind = format!("{:?}", detail.kind).to_lowercase();
        let buttons: Html = members[g]
            .iter()
            .copied()
            .take(MAX_OPS_DRAWN)
            .map(|i| {
                let d = &r.op_details[i];
                let on_select = props.on_select.clone();
                let selected = props.selected == Some(i);
                let onclick = Callback::from(move |_| on_select.emit(if selected { None } else { Some(i) }));
                html! {
                    <button type="button" class={classes!("op", selected.then_some("selected"))}
                        aria-pressed={selected.to_string()} title={d.reason.clone()} {onclick}>
                        <span class="op-name">{ d.name.clone() }</span>
                        <span class="op-type">{ d.op_type.as_str() }</span>
                    </button>
                }
            })
            .collect();
        let preds = &layers.preds[g];
        html! {
            <li class={classes!("group-box", kind.clone())} data-group={(g + 1).to_string()}
                aria-label={format!("group {}, {kind}, {} ops", g + 1, detail.ops.len())}>
                <div class="group-head">
                    <strong>{ format!("{}", g + 1) }</strong>
                    <span class={classes!("kind", kind.clone())}>{ kind.clone() }</span>
                    <span class="group-bytes">{ format!("{} → {}", format_bytes(detail.unfused.total), format_bytes(detail.fused.total)) }</span>
                </div>
                <div class="group-ops">{ buttons }</div>
                if !preds.is_empty() {
                    <div class="group-feeds">{ format!("reads from group{} {}", if preds.len() == 1 { "" } else { "s" }, names(preds)) }</div>
                }
            </li>
        }
    };
    // Whole groups, layer by layer, until the op budget is spent (the first group always).
    let mut drawn_ops = 0usize;
    let mut drawn_groups = 0usize;
    let mut rows = Vec::new();
    'layers: for (l, groups) in layers.layers().iter().enumerate() {
        let mut boxes = Vec::new();
        for &g in groups {
            drawn_ops += r.group_details[g].ops.len();
            if drawn_ops > MAX_OPS_DRAWN && drawn_groups > 0 {
                if !boxes.is_empty() {
                    rows.push((l, boxes));
                }
                break 'layers;
            }
            drawn_groups += 1;
            boxes.push(group_box(g));
        }
        rows.push((l, boxes));
    }
    let hidden_groups = r.group_details.len() - drawn_groups;
    html! {
        <div class="group-view">
            <div class="group-layers">
                <p class="hint">{ "Groups in data-flow order: each row holds the groups whose inputs are all written by rows above it." }</p>
                <ol class="layers" aria-label="Fusion groups by data-flow step" data-testid="group-boxes">
                    { for rows.into_iter().map(|(l, boxes)| html! {
                        <li class="layer">
                            <span class="layer-label">{ format!("step {}", l + 1) }</span>
                            <ul class="group-boxes">{ for boxes }</ul>
                        </li>
                    }) }
                </ol>
                if hidden_groups > 0 {
                    <p class="hint">{ format!("{} more groups are not drawn; the exports list them all.", group_digits(hidden_groups as u64)) }</p>
                }
            </div>
            <aside class="op-aside">
            {
                match props.selected.filter(|&i| i < props.graph.len()) {
                    Some(i) => op_details(&props.graph, &props.report, i, props.on_select.clone()),
                    None => html! { <p class="hint op-placeholder">{ "Select an op (click, or Tab then Enter) to see its tensors, their sizes and why it is in its group. Hovering an op shows the reason too." }</p> },
                }
            }
            </aside>
        </div>
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

fn op_details(graph: &OpGraph, report: &AnalysisReport, i: usize, on_select: Callback<Option<usize>>) -> Html {
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
