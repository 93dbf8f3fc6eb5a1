//! The drawing of the fusion groups: a zoom bar, then the SVG with one box per group (its head
//! and its ops, each selectable by mouse or keyboard) and the edges between groups.

use yew::prelude::*;

use super::drawing::{Drawing, ZOOMS};
use draw::group_graph::metrics::{BOX_WIDTH, HEAD_HEIGHT, OP_ROW_HEIGHT};
use draw::group_graph::BoxRows;
use draw::layout::Layout;
use fusion::tables::kind_name;
use fusion::AnalysisReport;
use units::{ellipsize, format_bytes, plural};

/// What the drawing shows and what selecting in it does.
pub(super) struct DagProps<'a> {
    pub layout: &'a Layout,
    pub drawing: &'a Drawing,
    pub report: &'a AnalysisReport,
    pub zoom: UseStateHandle<usize>,
    /// The group whose edges are lit (the selected group, or the selected op's group).
    pub focus_group: Option<usize>,
    pub group: Option<usize>,
    pub op: Option<usize>,
    pub select_op: Callback<Option<usize>>,
    pub select_group: Callback<Option<usize>>,
    pub scroller: NodeRef,
}

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

pub(super) fn dag(p: DagProps<'_>) -> Html {
    let DagProps { layout, drawing: d, report: r, zoom, focus_group, group, op, select_op, select_group, scroller } = p;
    let n_groups = r.group_details.len();
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
                let onclick = head_click.reform(|_: MouseEvent| ());
                let ops = d.members[g].iter().take(rows.shown).enumerate().map(|(k, &i)| {
                    let od = &r.op_details[i];
                    let selected = op == Some(i);
                    let click = {
                        let select_op = select_op.clone();
                        Callback::from(move |()| select_op.emit(if selected { None } else { Some(i) }))
                    };
                    let onclick = click.reform(|_: MouseEvent| ());
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
                            aria-label={format!("group {}, {kind}, {}, {} fused", g + 1, plural(detail.ops.len() as u64, "op", "ops"), format_bytes(detail.fused.total))}
                            {onclick} onkeydown={on_enter(head_click.clone())}>
                            <rect class="dag-head-bg" width={p.width.to_string()} height={HEAD_HEIGHT.to_string()} rx="6" />
                            <text class="dag-head-text" x="8" y="16">{ format!("{}  {kind}", g + 1) }</text>
                            <text class="dag-head-bytes" x={(BOX_WIDTH - 8.0).to_string()} y="16" text-anchor="end">{ format_bytes(detail.fused.total) }</text>
                        </g>
                        { for ops }
                        if rows.more > 0 {
                            <text class="dag-more" x="8" y={(HEAD_HEIGHT + rows.shown as f64 * OP_ROW_HEIGHT + 13.0).to_string()}
                                onclick={head_click.reform(|_: MouseEvent| ())}>
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
            <span class="hint">{ format!("{} in {} of data flow; arrows carry the tensors one group writes and another reads.",
                plural(n_groups as u64, "group", "groups"), plural(layout.nodes.iter().map(|p| p.layer + 1).max().unwrap_or(0) as u64, "step", "steps")) }</span>
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
