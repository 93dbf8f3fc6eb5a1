//! The fusion groups as a layered DAG drawn in SVG ([`crate::draw::group_graph::group_drawing`]):
//! one coloured box per group listing its ops, arrows for the data that crosses from one group
//! to another. Ops and group headers are focusable buttons: selecting one (click, or Enter/Space)
//! shows its tensors, their sizes and the rule that put it in its group (an op), or the group's
//! traffic, neighbours and ops (a group); hovering an op shows the rule as a tooltip.
//! Graphs above [`MAX_DRAWN_OPS`] ops, too large to read as a drawing, are listed instead (the
//! virtualised op table), and the list is one click away for any graph.

use std::collections::HashMap;
use yew::prelude::*;

use crate::page::Shared;

use crate::draw::group_graph::metrics::{BOX_WIDTH, HEAD_HEIGHT, OP_ROW_HEIGHT};
pub use crate::draw::group_graph::MAX_DRAWN_OPS;
use crate::draw::group_graph::{group_drawing, group_graph, BoxRows, GroupGraph};
use crate::draw::layout::Layout;
use crate::fusion::graph::SizeSource;
use crate::fusion::tables::{kind_name, ops_table};
use crate::fusion::{AnalysisReport, OpGraph, OpId, TensorId};
use crate::table::DataTable;
use crate::units::{ellipsize, format_bytes, group_digits};

use super::data_table::DataTableView;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub graph: Shared<OpGraph>,
    pub report: Shared<AnalysisReport>,
    pub selected: Option<usize>,
    pub on_select: Callback<Option<usize>>,
}

/// What the drawing needs, computed once per analysis.
struct Drawing {
    groups: GroupGraph,
    /// Op indices (file order) of each group, in the group's order.
    members: Vec<Vec<usize>>,
    /// None above [`MAX_DRAWN_OPS`].
    layout: Option<Layout>,
    ops: Shared<DataTable>,
}

fn drawing(graph: &OpGraph, report: &AnalysisReport) -> Drawing {
    let op_group: Vec<usize> = report.op_details.iter().map(|d| d.group).collect();
    let index: HashMap<&str, usize> = report.op_details.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
    let members: Vec<Vec<usize>> = report
        .group_details
        .iter()
        .map(|g| g.ops.iter().filter_map(|name| index.get(name.as_str()).copied()).collect())
        .collect();
    let groups = group_graph(graph, &op_group);
    let layout = (graph.len() <= MAX_DRAWN_OPS).then(|| {
        let sizes: Vec<usize> = members.iter().map(Vec::len).collect();
        group_drawing(&groups, &sizes)
    });
    Drawing { groups, members, layout, ops: Shared::new(ops_table(report)) }
}

/// Zoom steps of the drawing.
const ZOOMS: [f64; 7] = [0.4, 0.55, 0.7, 0.85, 1.0, 1.25, 1.5];
const DEFAULT_ZOOM: usize = 4;

fn names(gs: &[usize]) -> String {
    gs.iter().map(|g| (g + 1).to_string()).collect::<Vec<_>>().join(", ")
}

/// Enter or Space on a focusable SVG element acts like a click.
fn on_enter(cb: Callback<()>) -> Callback<KeyboardEvent> {
    Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Enter" || e.key() == " " {
            e.prevent_default();
            cb.emit(())
        }
    })
}

/// An SVG path through `points`: straight down from the source, then a smooth curve per step.
fn path(points: &[(f64, f64)]) -> String {
    let mut d = format!("M{:.1},{:.1}", points[0].0, points[0].1);
    for w in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let my = (y0 + y1) / 2.0;
        d += &format!(" C{x0:.1},{my:.1} {x1:.1},{my:.1} {x1:.1},{y1:.1}");
    }
    d
}

#[function_component(GroupView)]
pub fn group_view(props: &Props) -> Html {
    let d = use_memo((props.graph.clone(), props.report.clone()), |(g, r)| drawing(g, r));
    let selected_group = use_state_eq(|| None::<usize>);
    let zoom = use_state_eq(|| DEFAULT_ZOOM);
    let list = use_state_eq(|| false);
    let scroller = use_node_ref();
    // A new drawing opens scrolled to its first step's leftmost box: the layout centres layers
    // over their successors, so a wide graph's top left corner can be empty.
    {
        let (scroller, d, zoom) = (scroller.clone(), d.clone(), *zoom);
        let shown = !*list;
        use_effect_with((props.graph.clone(), shown), move |_| {
            let first = d
                .layout
                .as_ref()
                .and_then(|l| l.nodes.iter().filter(|p| p.layer == 0).map(|p| p.x).min_by(|a, b| a.total_cmp(b)));
            if let (Some(x), Some(el)) = (first, scroller.cast::<web_sys::Element>()) {
                el.set_scroll_left(((x - 16.0) * ZOOMS[zoom]).max(0.0) as i32);
                el.set_scroll_top(0);
            }
        });
    }
    let r = &props.report;
    let n_groups = r.group_details.len();
    // An op selection wins; a group selection that no longer exists is dropped.
    let op = props.selected.filter(|&i| i < props.graph.len());
    let group = if op.is_some() { None } else { selected_group.filter(|&g| g < n_groups) };
    let focus_group = op.map(|i| r.op_details[i].group).or(group);

    let select_op = {
        let (on_select, selected_group) = (props.on_select.clone(), selected_group.clone());
        move |i: Option<usize>| {
            selected_group.set(None);
            on_select.emit(i)
        }
    };
    let select_group = {
        let (on_select, selected_group) = (props.on_select.clone(), selected_group.clone());
        Callback::from(move |g: Option<usize>| {
            on_select.emit(None);
            selected_group.set(g)
        })
    };

    let drawing_html = match (&d.layout, *list) {
        (Some(layout), false) => {
            let scale = ZOOMS[*zoom];
            let edges = layout.routes.iter().map(|route| {
                let lit = focus_group.is_some_and(|g| g == route.from || g == route.to);
                html! {
                    <path class={classes!("dag-edge", lit.then_some("lit"))} d={path(&route.points)}
                        data-from={(route.from + 1).to_string()} data-to={(route.to + 1).to_string()} marker-end="url(#dag-arrow)" />
                }
            });
            let boxes = layout.nodes.iter().enumerate().map(|(g, p)| {
                let detail = &r.group_details[g];
                let kind = kind_name(detail.kind);
                let rows = BoxRows::for_ops(d.members[g].len());
                let is_sel = group == Some(g);
                let head_click = {
                    let select_group = select_group.clone();
                    Callback::from(move |()| select_group.emit(if is_sel { None } else { Some(g) }))
                };
                let onclick = {
                    let c = head_click.clone();
                    Callback::from(move |_: MouseEvent| c.emit(()))
                };
                let ops = d.members[g].iter().take(rows.shown).enumerate().map(|(k, &i)| {
                    let od = &r.op_details[i];
                    let selected = op == Some(i);
                    let click = {
                        let select_op = select_op.clone();
                        Callback::from(move |()| select_op(if selected { None } else { Some(i) }))
                    };
                    let onclick = {
                        let c = click.clone();
                        Callback::from(move |_: MouseEvent| c.emit(()))
                    };
                    let y = HEAD_HEIGHT + k as f64 * OP_ROW_HEIGHT;
                    html! {
                        <g class={classes!("op", selected.then_some("selected"))} role="button" tabindex="0"
                            aria-pressed={selected.to_string()} aria-label={format!("{} ({}): {}", od.name, od.op_type.as_str(), od.reason)}
                            transform={format!("translate(0,{y})")} {onclick} onkeydown={on_enter(click)}>
                            <title>{ format!("{} ({}) — {}", od.name, od.op_type.as_str(), od.reason) }</title>
                            <rect class="op-bg" x="3" y="0" width={(BOX_WIDTH - 6.0).to_string()} height={OP_ROW_HEIGHT.to_string()} rx="3" />
                            <text class="op-name" x="8" y="13">{ ellipsize(&od.name, 18) }</text>
                            <text class="op-type" x={(BOX_WIDTH - 8.0).to_string()} y="13" text-anchor="end">{ od.op_type.as_str() }</text>
                        </g>
                    }
                });
                let preds = &d.groups.preds[g];
                html! {
                    <g class={classes!("dag-group", kind.clone(), is_sel.then_some("selected"), (focus_group == Some(g)).then_some("focus"))}
                        data-group={(g + 1).to_string()} transform={format!("translate({:.1},{:.1})", p.x, p.y)}>
                        if !preds.is_empty() {
                            <desc class="group-feeds">{ format!("reads from group{} {}", if preds.len() == 1 { "" } else { "s" }, names(preds)) }</desc>
                        }
                        <rect class="dag-box" width={p.width.to_string()} height={p.height.to_string()} rx="6" />
                        <g class="dag-head" role="button" tabindex="0" aria-pressed={is_sel.to_string()}
                            aria-label={format!("group {}, {kind}, {} ops, {} fused", g + 1, detail.ops.len(), format_bytes(detail.fused.total))}
                            {onclick} onkeydown={on_enter(head_click.clone())}>
                            <rect class="dag-head-bg" width={p.width.to_string()} height={HEAD_HEIGHT.to_string()} rx="6" />
                            <text class="dag-head-text" x="8" y="16">{ format!("{}  {kind}", g + 1) }</text>
                            <text class="dag-head-bytes" x={(BOX_WIDTH - 8.0).to_string()} y="16" text-anchor="end">{ format_bytes(detail.fused.total) }</text>
                        </g>
                        { for ops }
                        if rows.more > 0 {
                            <text class="dag-more" x="8" y={(HEAD_HEIGHT + rows.shown as f64 * OP_ROW_HEIGHT + 13.0).to_string()}
                                onclick={let c = head_click.clone(); Callback::from(move |_: MouseEvent| c.emit(()))}>
                                { format!("+ {} more ops (select the group)", rows.more) }
                            </text>
                        }
                    </g>
                }
            });
            let zoom_to = |z: usize| {
                let zoom = zoom.clone();
                Callback::from(move |_: MouseEvent| zoom.set(z))
            };
            html! {
                <>
                <div class="dag-toolbar" role="group" aria-label="Zoom the drawing">
                    <button type="button" disabled={*zoom == 0} onclick={zoom_to(zoom.saturating_sub(1))} aria-label="Zoom out">{ "−" }</button>
                    <span class="dag-zoom" data-testid="dag-zoom">{ format!("{:.0} %", scale * 100.0) }</span>
                    <button type="button" disabled={*zoom + 1 == ZOOMS.len()} onclick={zoom_to((*zoom + 1).min(ZOOMS.len() - 1))} aria-label="Zoom in">{ "+" }</button>
                    <span class="hint">{ format!("{} groups in {} steps of data flow; arrows carry the tensors one group writes and another reads.",
                        group_digits(n_groups as u64), layout.nodes.iter().map(|p| p.layer + 1).max().unwrap_or(0)) }</span>
                </div>
                <div class="dag-scroll" ref={scroller.clone()}>
                    <svg class="dag" data-testid="group-boxes" role="group" aria-label="Fusion groups as a data-flow graph"
                        width={format!("{:.0}", layout.width * scale)} height={format!("{:.0}", layout.height * scale)}
                        viewBox={format!("0 0 {:.1} {:.1}", layout.width, layout.height)}>
                        <defs>
                            <marker id="dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
                                <path d="M0,0 L10,5 L0,10 z" class="dag-arrow" />
                            </marker>
                        </defs>
                        <g class="dag-edges">{ for edges }</g>
                        <g class="dag-groups">{ for boxes }</g>
                    </svg>
                </div>
                </>
            }
        }
        (layout, _) => {
            let why = if layout.is_none() {
                format!(
                    "This graph has {} ops: a drawing of more than {} is too large to read, so the ops are listed. Select a row to see its tensors and the rule that placed it.",
                    group_digits(props.graph.len() as u64),
                    group_digits(MAX_DRAWN_OPS as u64)
                )
            } else {
                "Every op, in file order. Select a row to see its tensors and the rule that placed it.".to_string()
            };
            let on_activate = {
                let select_op = select_op.clone();
                Callback::from(move |i: usize| select_op(Some(i)))
            };
            html! {
                <>
                <p class="hint" data-testid="list-why">{ why }</p>
                <DataTableView table={d.ops.clone()} on_activate={Some(on_activate)} selected={op} />
                </>
            }
        }
    };
    let toggle = d.layout.is_some().then(|| {
        let list = list.clone();
        let showing_list = *list;
        html! {
            <button type="button" class="view-toggle" data-testid="view-toggle" onclick={move |_| list.set(!showing_list)}>
                { if showing_list { "Show the drawing" } else { "List every op" } }
            </button>
        }
    });
    html! {
        <div class="group-view">
            <div class="group-layers">
                { for toggle }
                { drawing_html }
            </div>
            <aside class="op-aside">
            {
                match (op, group) {
                    (Some(i), _) => op_details(&props.graph, &props.report, i, props.on_select.clone()),
                    (None, Some(g)) => group_details(&d, r, g, select_group.clone(), Callback::from(move |i| select_op(Some(i)))),
                    (None, None) => html! { <p class="hint op-placeholder">{ "Select an op or a group (click, or Tab then Enter) to see its tensors, their sizes and why it is in its group. Hovering an op shows the reason too." }</p> },
                }
            }
            </aside>
        </div>
    }
}

/// A group: its traffic, the groups it reads from and feeds, and every op (each selectable).
fn group_details(
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
                <h3>{ format!("Group {} ({kind}), {} ops", g + 1, detail.ops.len()) }</h3>
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
