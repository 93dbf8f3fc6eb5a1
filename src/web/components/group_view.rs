//! The fusion groups as boxes of ops. Each op is a button: selecting it (click, or Enter/Space
//! on the keyboard) shows its tensors, their sizes and the rule that put it in its group;
//! hovering shows the rule as a tooltip.

use std::collections::HashMap;
use std::rc::Rc;

use yew::prelude::*;

use crate::fusion::graph::SizeSource;
use crate::fusion::{AnalysisReport, OpGraph, OpId, TensorId};
use crate::units::{format_bytes, group_digits};

/// Op buttons drawn at most (whole groups; a first group larger than this is cut): past this
/// the page stays responsive, and the exports carry every op.
pub const MAX_OPS_DRAWN: usize = 2000;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub graph: Rc<OpGraph>,
    pub report: Rc<AnalysisReport>,
    pub selected: Option<usize>,
    pub on_select: Callback<Option<usize>>,
}

#[function_component(GroupView)]
pub fn group_view(props: &Props) -> Html {
    let r = &props.report;
    let index: HashMap<&str, usize> = r.op_details.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
    let mut drawn = 0usize;
    // Whole groups until the op budget is spent.
    let boxes = r.group_details.iter().enumerate().take_while(|(_, detail)| {
        drawn += detail.ops.len();
        drawn <= MAX_OPS_DRAWN || drawn == detail.ops.len()
    });
    let boxes = boxes.map(|(g, detail)| {
        let kind = format!("{:?}", detail.kind).to_lowercase();
        let ops = detail.ops.iter().filter_map(|name| index.get(name.as_str()).copied()).take(MAX_OPS_DRAWN);
        let buttons: Html = ops
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
        html! {
            <li class={classes!("group-box", kind.clone())} aria-label={format!("group {}, {kind}, {} ops", g + 1, detail.ops.len())}>
                <div class="group-head">
                    <strong>{ format!("{}", g + 1) }</strong>
                    <span class={classes!("kind", kind.clone())}>{ kind.clone() }</span>
                    <span class="group-bytes">{ format!("{} → {}", format_bytes(detail.unfused.total), format_bytes(detail.fused.total)) }</span>
                </div>
                <div class="group-ops">{ buttons }</div>
            </li>
        }
    });
    let boxes: Vec<Html> = boxes.collect();
    let hidden_groups = r.group_details.len() - boxes.len();
    html! {
        <div class="group-view">
            <ul class="group-boxes" aria-label="Fusion groups and their ops" data-testid="group-boxes">{ for boxes }</ul>
            if hidden_groups > 0 {
                <p class="hint">{ format!("{} more groups are not drawn; the exports list them all.", group_digits(hidden_groups as u64)) }</p>
            }
            {
                match props.selected.filter(|&i| i < props.graph.len()) {
                    Some(i) => op_details(&props.graph, &props.report, i, props.on_select.clone()),
                    None => html! { <p class="hint">{ "Select an op to see its tensors, their sizes and why it is in its group." }</p> },
                }
            }
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
            <td class="num">{ format!("{} bytes", group_digits(tensor.size_bytes)) }</td>
            <td class="num">{ format_bytes(tensor.size_bytes) }</td>
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
            <table class="tensors">
                <caption>{ "Tensors" }</caption>
                <thead><tr><th scope="col">{ "role" }</th><th scope="col">{ "tensor" }</th><th scope="col" class="num">{ "size" }</th><th scope="col" class="num">{ "" }</th><th scope="col">{ "size from" }</th></tr></thead>
                <tbody>
                    { for op.inputs.iter().map(|&t| tensor_row(graph, t, "input")) }
                    { tensor_row(graph, op.output, "output") }
                </tbody>
            </table>
        </section>
    }
}
