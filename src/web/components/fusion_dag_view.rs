//! The kernel groups of one layer or step of a trace, drawn as the op graphs' group DAG: one box
//! per kernel launch listing the ops its group ran, arrows for the tensors handed from one launch
//! to the next. A picker chooses the layer or step; clicking a box shows its group's tensors,
//! bytes per call, calls, time and how they were known. The windows, boxes and edges are the
//! core's ([`crate::trace::view::fusion_dag`], computed in the worker); this only draws them.

use yew::prelude::*;

use crate::draw::group_graph::metrics::{BOX_WIDTH, HEAD_HEIGHT, OP_ROW_HEIGHT};
use crate::page::Shared;
use crate::trace::classify::name::short_name;
use crate::trace::compare::Comparison;
use crate::trace::fusion::TraceFusion;
use crate::trace::view::fusion_dag::{box_lines, shown_lines, window_drawing, FusionDag, DAG_BOXES};
use crate::trace::view::fusion_pair::{aligned_pair, pair_traffic_chart};
use crate::units::{ellipsize, format_bytes, format_duration_us, group_digits};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub fusion: Shared<TraceFusion>,
    pub dag: Shared<FusionDag>,
    /// Test-id suffix and heading prefix of a comparison's side ("" for one trace).
    #[prop_or_default]
    pub side: AttrValue,
    /// The window shown first (a comparison's aligned layer).
    #[prop_or_default]
    pub initial: usize,
    /// Groups to mark (a fusion difference's kernels), by index into `fusion.groups`.
    #[prop_or_default]
    pub marked: Vec<usize>,
}

fn bytes_or_unknown(b: Option<u64>) -> String {
    b.map_or_else(|| "unknown".to_string(), format_bytes)
}

fn json_text(v: &serde_json::Value) -> String {
    if v.is_null() {
        "not recorded".to_string()
    } else {
        v.to_string()
    }
}

#[function_component(FusionDagView)]
pub fn fusion_dag_view(props: &Props) -> Html {
    let windows = props.dag.windows.len();
    let picked = use_state_eq(|| props.initial.min(windows.saturating_sub(1)));
    let selected = use_state_eq(|| None::<usize>);
    {
        let (picked, selected, initial) = (picked.clone(), selected.clone(), props.initial);
        use_effect_with((props.dag.clone(), initial), move |_| {
            picked.set(initial);
            selected.set(None);
        });
    }
    let w_index = (*picked).min(windows.saturating_sub(1));
    let drawing = use_memo((props.dag.clone(), props.fusion.clone(), w_index), |(dag, fusion, w)| {
        dag.windows.get(*w).map(|win| window_drawing(win, fusion))
    });
    let suffix = if props.side.is_empty() { String::new() } else { format!("-{}", props.side) };
    let Some(w) = props.dag.windows.get(w_index) else {
        return html! {};
    };
    let Some((_, layout)) = drawing.as_ref() else { return html! {} };
    let f = &props.fusion;
    let on_pick = {
        let (picked, selected) = (picked.clone(), selected.clone());
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            picked.set(select.value().parse().unwrap_or(0));
            selected.set(None);
        })
    };
    let edges = w.edges.iter().filter_map(|e| {
        let route = layout.routes.iter().find(|r| r.from == e.from && r.to == e.to)?;
        let mut d = format!("M{:.1},{:.1}", route.points[0].0, route.points[0].1);
        for p in route.points.windows(2) {
            let ((x0, y0), (x1, y1)) = (p[0], p[1]);
            let my = (y0 + y1) / 2.0;
            d += &format!(" C{x0:.1},{my:.1} {x1:.1},{my:.1} {x1:.1},{y1:.1}");
        }
        let how = if e.exact { "execution trace" } else { "inferred from sizes" };
        Some(html! {
            <path class="dag-edge" {d} marker-end="url(#trace-dag-arrow)" data-bytes={e.bytes.to_string()}>
                <title>{ format!("{} → {}: {} ({how})", e.from + 1, e.to + 1, format_bytes(e.bytes)) }</title>
            </path>
        })
    });
    let boxes = layout.nodes.iter().zip(&w.boxes).enumerate().map(|(i, (p, b))| {
        let Some(g) = f.groups.get(b.group) else { return html! {} };
        let lines = box_lines(g);
        let rows = shown_lines(lines.len());
        let is_sel = *selected == Some(i);
        let click = {
            let selected = selected.clone();
            Callback::from(move |_: MouseEvent| selected.set(if is_sel { None } else { Some(i) }))
        };
        let key = {
            let selected = selected.clone();
            Callback::from(move |e: KeyboardEvent| {
                if e.key() == "Enter" || e.key() == " " {
                    e.prevent_default();
                    selected.set(if is_sel { None } else { Some(i) });
                }
            })
        };
        let marked = props.marked.contains(&b.group);
        html! {
            <g class={classes!("dag-group", g.kind.id(), is_sel.then_some("selected"), marked.then_some("marked"))}
                data-box={(i + 1).to_string()} data-group={b.group.to_string()} data-kernel={g.kernel.clone()}
                transform={format!("translate({:.1},{:.1})", p.x, p.y)}>
                <rect class="dag-box" width={p.width.to_string()} height={p.height.to_string()} rx="6" />
                <g class="dag-head" role="button" tabindex="0" aria-pressed={is_sel.to_string()}
                    aria-label={format!("kernel {} of the window, {}, {} per call fused", i + 1, g.kernel, bytes_or_unknown(g.fused_bytes_per_call))}
                    onclick={click.clone()} onkeydown={key}>
                    <title>{ format!("{}\n{} this call; fused {} / unfused {} per call", g.kernel, format_duration_us(b.dur_us),
                        bytes_or_unknown(g.fused_bytes_per_call), bytes_or_unknown(g.unfused_bytes_per_call)) }</title>
                    <rect class="dag-head-bg" width={p.width.to_string()} height={HEAD_HEIGHT.to_string()} rx="6" />
                    <text class="dag-head-text" x="8" y="16">{ format!("{} {}", i + 1, ellipsize(&short_name(&g.kernel, 40), 12)) }</text>
                    <text class="dag-head-bytes" x={(BOX_WIDTH - 8.0).to_string()} y="16" text-anchor="end">
                        { g.fused_bytes_per_call.map_or_else(|| "? B".to_string(), format_bytes) }
                    </text>
                </g>
                { for lines.iter().take(rows.shown).enumerate().map(|(k, line)| html! {
                    <text class="op-name" x="8" y={(HEAD_HEIGHT + k as f64 * OP_ROW_HEIGHT + 13.0).to_string()}>{ ellipsize(line, 28) }</text>
                }) }
                if rows.more > 0 {
                    <text class="dag-more" x="8" y={(HEAD_HEIGHT + rows.shown as f64 * OP_ROW_HEIGHT + 13.0).to_string()}
                        onclick={click}>{ format!("+ {} more (click the box)", rows.more) }</text>
                }
            </g>
        }
    });
    let details = selected.and_then(|i| Some((i, w.boxes.get(i)?))).and_then(|(i, b)| {
        let g = f.groups.get(b.group)?;
        let close = {
            let selected = selected.clone();
            Callback::from(move |_| selected.set(None))
        };
        let saved = g.unfused_bytes_per_call.zip(g.fused_bytes_per_call).map(|(u, fu)| u.saturating_sub(fu));
        Some(html! {
            <section class="op-details" aria-live="polite" data-testid={format!("dag-box-details{suffix}")}>
                <div class="op-details-head">
                    <h3>{ format!("Kernel {} of the window: {}", i + 1, short_name(&g.kernel, 80)) }</h3>
                    <button type="button" onclick={close} aria-label="Close the kernel details">{ "×" }</button>
                </div>
                <p>{ format!("{} ({}); {} calls in the trace, {} in all, this call {}.", g.kind.id(), g.category,
                    group_digits(g.calls), format_duration_us(g.time_us), format_duration_us(b.dur_us)) }</p>
                <p data-testid={format!("dag-box-bytes{suffix}")}>{ format!("Per call: fused {}, unfused {}, fusion saved {}. Known from: {}{}.",
                    bytes_or_unknown(g.fused_bytes_per_call), bytes_or_unknown(g.unfused_bytes_per_call), bytes_or_unknown(saved),
                    g.how.text(), g.bytes_unknown.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()) }</p>
                if g.parts.len() >= 2 {
                    <p>{ format!("Parts it fused: {}.", g.parts.join(" + ")) }</p>
                }
                if let Some(op) = &g.launched_by {
                    <p>{ format!("Launched by {op}.") }</p>
                }
                if !g.ops.is_empty() {
                    <div class="table-wrap"><table class="tensors">
                        <caption>{ "Ops and their input tensors (dims, types) as the trace recorded them" }</caption>
                        <thead><tr><th scope="col">{ "op" }</th><th scope="col">{ "input dims" }</th><th scope="col">{ "input types" }</th></tr></thead>
                        <tbody>
                            { for g.ops.iter().map(|o| html! {
                                <tr><td><code>{ o.op.clone() }</code></td><td><code>{ json_text(&o.input_dims) }</code></td><td><code>{ json_text(&o.input_types) }</code></td></tr>
                            }) }
                        </tbody>
                    </table></div>
                }
            </section>
        })
    });
    let heading = if props.side.is_empty() { String::new() } else { format!("{}: ", props.side) };
    html! {
        <div class="trace-dag" data-testid={format!("fusion-dag{suffix}")}>
            <div class="dag-toolbar">
                <label>{ format!("{heading}kernel groups of ") }
                    <select data-testid={format!("dag-window{suffix}")} onchange={on_pick}>
                        { for props.dag.windows.iter().enumerate().map(|(k, win)| html! {
                            <option value={k.to_string()} selected={k == w_index}>{ win.label.clone() }</option>
                        }) }
                    </select>
                </label>
            </div>
            <p class="hint" data-testid={format!("dag-note{suffix}")}>
                { format!("{} kernels in launch order{}; {} arrows carry a tensor one kernel writes and the next reads (the data flow of docs/trace-fusion.md). Windows: {}{}.",
                    group_digits(w.boxes.len() as u64),
                    if w.hidden > 0 { format!(", the first {DAG_BOXES} of {}: {} more not drawn", group_digits(w.kernels as u64), group_digits(w.hidden as u64)) } else { String::new() },
                    group_digits(w.edges.len() as u64),
                    props.dag.source,
                    if props.dag.windows_left_out > 0 { format!(", {} more not kept", props.dag.windows_left_out) } else { String::new() }) }
            </p>
            <div class="dag-scroll">
                <svg class="dag" data-testid={format!("dag-boxes{suffix}")} role="group" aria-label="Kernel groups of the window as a data-flow graph"
                    width={format!("{:.0}", layout.width)} height={format!("{:.0}", layout.height)}
                    viewBox={format!("0 0 {:.1} {:.1}", layout.width, layout.height)}>
                    <defs>
                        <marker id="trace-dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
                            <path d="M0,0 L10,5 L0,10 z" class="dag-arrow" />
                        </marker>
                    </defs>
                    <g class="dag-edges">{ for edges }</g>
                    <g class="dag-groups">{ for boxes }</g>
                </svg>
            </div>
            { details.unwrap_or_default() }
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct PairProps {
    pub comparison: Shared<Comparison>,
    /// Each side's fusion and windows, in the comparison's order.
    pub sides: [(Shared<TraceFusion>, Shared<FusionDag>); 2],
}

/// Both sides' kernel groups of the aligned layer side by side, their traffic for one pass of
/// it, and the comparison's fusion differences that name kernels drawn: picking one marks its
/// boxes on both sides.
#[function_component(FusionPairView)]
pub fn fusion_pair_view(props: &PairProps) -> Html {
    let pair = use_memo((props.comparison.clone(), props.sides.clone()), |(c, s)| {
        aligned_pair(c, [(&s[0].0, &s[0].1), (&s[1].0, &s[1].1)])
    });
    let picked = use_state_eq(|| None::<usize>);
    let Some(p) = pair.as_ref() else { return html! {} };
    let chart = pair_traffic_chart(p).to_svg();
    let marked = |side: usize| -> Vec<usize> {
        let Some(d) = (*picked).and_then(|k| p.differences.get(k)) else { return Vec::new() };
        let w = &props.sides[side].1.windows[p.sides[side].window];
        d.boxes[side].iter().filter_map(|&b| w.boxes.get(b).map(|x| x.group)).collect()
    };
    let boxes_text = |boxes: &[usize]| -> String {
        if boxes.is_empty() {
            "none drawn".to_string()
        } else {
            boxes.iter().map(|b| (b + 1).to_string()).collect::<Vec<_>>().join(", ")
        }
    };
    html! {
        <section class="trace-dag-pair" data-testid="fusion-pair">
            <p class="fusion-line" data-testid="fusion-pair-label">{ p.label.clone() }</p>
            <figure class="chart" data-testid="chart-fusion-pair">{ Html::from_html_unchecked(AttrValue::from(chart)) }</figure>
            if !p.differences.is_empty() {
                <ol class="pair-differences" data-testid="fusion-pair-differences">
                    { for p.differences.iter().enumerate().map(|(k, d)| {
                        let diff = &props.comparison.fusion_differences[d.index];
                        let on = *picked == Some(k);
                        let onclick = {
                            let picked = picked.clone();
                            Callback::from(move |_: MouseEvent| picked.set(if on { None } else { Some(k) }))
                        };
                        html! {
                            <li>
                                <button type="button" class="link" aria-pressed={on.to_string()} {onclick}>
                                    { format!("{} fuses {} where the other side runs {} kernels", diff.fused_side,
                                        short_name(&diff.fused_kernel, 50), diff.unfused_kernels.len()) }
                                </button>
                                { format!(" — boxes {}: {}; {}: {}", p.sides[0].key, boxes_text(&d.boxes[0]), p.sides[1].key, boxes_text(&d.boxes[1])) }
                            </li>
                        }
                    }) }
                </ol>
            }
            <div class="dag-pair">
                { for (0..2).map(|i| html! {
                    <FusionDagView fusion={props.sides[i].0.clone()} dag={props.sides[i].1.clone()}
                        side={AttrValue::from(p.sides[i].key.clone())} initial={p.sides[i].window} marked={marked(i)} />
                }) }
            </div>
        </section>
    }
}
