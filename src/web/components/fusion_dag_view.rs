//! The kernel groups of one layer or step of a trace, drawn as the op graphs' group DAG: one box
//! per kernel launch listing the ops its group ran, arrows for the tensors handed from one launch
//! to the next. A picker chooses the layer or step; clicking a box shows its group's tensors,
//! bytes per call, calls, time and how they were known. The windows, boxes and edges are the
//! core's ([`analysis::trace_fusion::dag`], computed in the worker, and drawn by
//! `view::fusion_dag`); this only shows them.

use yew::prelude::*;

use analysis::compare::Comparison;
use analysis::findings::pair_side_names;
use analysis::trace_fusion::dag::{FusionDag, DAG_BOXES};
use analysis::trace_fusion::TraceFusion;
use page::ByAddress;
use units::{group_digits, plural};
use view::aligned_layer::aligned_layer_svg;
use view::fusion_dag::{box_details_html, loose_boxes, window_svg};
use view::fusion_pair::{aligned_pair, difference_line, pair_bytes_unknown, pair_traffic_chart};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub fusion: ByAddress<TraceFusion>,
    pub dag: ByAddress<FusionDag>,
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

/// The drawing's zoom steps, and the step of its own size.
const ZOOMS: [f64; 6] = [0.4, 0.55, 0.7, 0.85, 1.0, 1.25];
const ZOOM_ONE: usize = 4;

#[function_component(FusionDagView)]
pub fn fusion_dag_view(props: &Props) -> Html {
    let windows = props.dag.windows.len();
    // The parent keys this view by its trace, so a new trace starts at its initial window.
    let picked = use_state_eq(|| props.initial);
    let selected = use_state_eq(|| None::<usize>);
    let zoom = use_state_eq(|| ZOOM_ONE);
    let w_index = (*picked).min(windows.saturating_sub(1));
    let suffix = if props.side.is_empty() { String::new() } else { format!("-{}", props.side) };
    let Some(w) = props.dag.windows.get(w_index) else {
        return html! {};
    };
    let f = &props.fusion;
    // The drawing and the details are text from the core (as the charts are), so the page
    // bundle carries string formatting rather than a component tree per box.
    let scale = ZOOMS[(*zoom).min(ZOOMS.len() - 1)];
    let svg = window_svg(w, f, &format!("dag-boxes{suffix}"), &props.marked, *selected, scale);
    let zoom_to = |z: usize| {
        let zoom = zoom.clone();
        Callback::from(move |_: MouseEvent| zoom.set(z))
    };
    let details = selected.and_then(|i| box_details_html(w, f, i, &suffix));
    let on_pick = {
        let (picked, selected) = (picked.clone(), selected.clone());
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            picked.set(select.value().parse().unwrap_or(0));
            selected.set(None);
        })
    };
    let on_box = {
        let selected = selected.clone();
        Callback::from(move |e: MouseEvent| {
            let Some(target) = e.target_dyn_into::<web_sys::Element>() else { return };
            let b = target.closest("[data-box]").ok().flatten().and_then(|g| g.get_attribute("data-box"));
            if let Some(b) = b.and_then(|b| b.parse::<usize>().ok()).and_then(|b| b.checked_sub(1)) {
                selected.set(if *selected == Some(b) { None } else { Some(b) });
            }
        })
    };
    let heading = if props.side.is_empty() { String::new() } else { format!("{}: ", props.side) };
    let note = format!(
        "{} in launch order{}; {} a tensor one kernel writes and the next reads (the data flow of docs/trace-fusion.md){}. Windows: {}{}. Click a box for its bytes and tensors.",
        plural(w.boxes.len() as u64, "kernel", "kernels"),
        if w.hidden > 0 {
            format!(", the first {DAG_BOXES} of {}: {} more not drawn", group_digits(w.kernels as u64), group_digits(w.hidden as u64))
        } else {
            String::new()
        },
        plural(w.edges.len() as u64, "arrow carries", "arrows carry"),
        match loose_boxes(w) {
            0 => String::new(),
            k if k == w.boxes.len() => "; no kernel shares one with another drawn kernel, so the boxes are in rows".to_string(),
            1 => "; the one that shares none with another drawn kernel is in a row below the linked ones".to_string(),
            k => format!("; the {k} that share none with another drawn kernel are in rows below the linked ones"),
        },
        props.dag.source,
        if props.dag.windows_left_out > 0 { format!(", {} more not kept", props.dag.windows_left_out) } else { String::new() }
    );
    html! {
        <div class="trace-dag" data-testid={format!("fusion-dag{suffix}")}>
            <label>{ format!("{heading}kernel groups of ") }
                <select data-testid={format!("dag-window{suffix}")} onchange={on_pick}>
                    { for props.dag.windows.iter().enumerate().map(|(k, win)| html! {
                        <option value={k.to_string()} selected={k == w_index}>{ win.label.clone() }</option>
                    }) }
                </select>
            </label>
            <p class="hint" data-testid={format!("dag-note{suffix}")}>{ note }</p>
            <div class="dag-toolbar" role="group" aria-label="Zoom the drawing">
                <button type="button" disabled={*zoom == 0} onclick={zoom_to((*zoom).saturating_sub(1))} aria-label="Zoom out">{ "−" }</button>
                <span class="dag-zoom" data-testid={format!("dag-zoom{suffix}")}>{ format!("{:.0} %", scale * 100.0) }</span>
                <button type="button" disabled={*zoom + 1 >= ZOOMS.len()} onclick={zoom_to(*zoom + 1)} aria-label="Zoom in">{ "+" }</button>
            </div>
            <div class="dag-scroll" onclick={on_box} tabindex="0" role="region" aria-label="The kernel groups drawn (scrolls)">{ Html::from_html_unchecked(AttrValue::from(svg)) }</div>
            if let Some(d) = details {
                { Html::from_html_unchecked(AttrValue::from(d)) }
            }
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct PairProps {
    pub comparison: ByAddress<Comparison>,
    /// Each side's fusion and windows, in the comparison's order.
    pub sides: [(ByAddress<TraceFusion>, ByAddress<FusionDag>); 2],
}

/// Both sides' kernel groups of the aligned layer side by side, their traffic for one pass of
/// it, and the comparison's fusion differences that name kernels drawn: picking one marks its
/// boxes on both sides.
#[function_component(FusionPairView)]
pub fn fusion_pair_view(props: &PairProps) -> Html {
    // Aligned once per comparison and pair of sides, not again on each difference picked.
    let pair = use_memo((props.comparison.clone(), props.sides.clone()), |(c, s)| {
        aligned_pair(c, [(&s[0].0, &s[0].1), (&s[1].0, &s[1].1)])
    });
    let picked = use_state_eq(|| None::<usize>);
    // The aligned layer the two drawings below show, kernel by kernel, its differences marked:
    // drawn once per comparison, not again on each difference picked.
    let aligned = use_memo(props.comparison.clone(), |c| {
        let keys: Vec<&str> = c.platforms.iter().map(|p| p.key.as_str()).collect();
        let names = pair_side_names(c);
        let keys = [keys.first().copied().unwrap_or("a"), keys.get(1).copied().unwrap_or("b")];
        c.layer_alignment.first().and_then(|a| aligned_layer_svg(a, keys, [names[0].as_str(), names[1].as_str()]))
    });
    let Some(p) = pair.as_ref().as_ref() else { return html! {} };
    let chart = pair_traffic_chart(p).map(|c| c.to_svg());
    let bytes_unknown = pair_bytes_unknown(p);
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
            if let Some(svg) = aligned.as_ref() {
                <figure class="chart aligned-layer" data-testid="aligned-layer" tabindex="0" role="region" aria-label="One layer aligned kernel by kernel">{ Html::from_html_unchecked(AttrValue::from(svg.clone())) }</figure>
            }
            if let Some(chart) = chart {
                <figure class="chart" data-testid="chart-fusion-pair">{ Html::from_html_unchecked(AttrValue::from(chart)) }</figure>
            }
            if let Some(line) = bytes_unknown {
                <p class="hint" data-testid="fusion-pair-bytes-unknown">{ line }</p>
            }
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
                                    { difference_line(diff, [&p.sides[0].key, &p.sides[1].key]) }
                                </button>
                                { format!(" — {}; boxes {}: {}; {}: {}", diff.evidence, p.sides[0].key, boxes_text(&d.boxes[0]), p.sides[1].key, boxes_text(&d.boxes[1])) }
                            </li>
                        }
                    }) }
                </ol>
            }
            <div class="dag-pair">
                { for (0..2).map(|i| html! {
                    <FusionDagView key={p.sides[i].key.clone()} fusion={props.sides[i].0.clone()} dag={props.sides[i].1.clone()}
                        side={AttrValue::from(p.sides[i].key.clone())} initial={p.sides[i].window} marked={marked(i)} />
                }) }
            </div>
        </section>
    }
}
