//! The fusion groups as a layered DAG drawn in SVG ([`draw::group_graph::group_drawing`]):
//! one coloured box per group listing its ops, arrows for the data that crosses from one group
//! to another. Ops and group headers are focusable buttons: selecting one (click, or Enter/Space)
//! shows its tensors, their sizes and the rule that put it in its group (an op), or the group's
//! traffic, neighbours and ops (a group); hovering an op shows the rule as a tooltip.
//! Graphs above [`MAX_DRAWN_OPS`] ops, too large to read as a drawing, are listed instead (the
//! virtualised op table), and the list is one click away for any graph.

use yew::prelude::*;

use page::ByAddress;

pub use draw::group_graph::MAX_DRAWN_OPS;
use fusion::{AnalysisReport, OpGraph};
use units::group_digits;

use super::data_table::DataTableView;

mod dag;
mod details;
mod drawing;

use details::{group_details, op_details};
use drawing::{drawing, DEFAULT_ZOOM, ZOOMS};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub graph: ByAddress<OpGraph>,
    pub report: ByAddress<AnalysisReport>,
    pub selected: Option<usize>,
    pub on_select: Callback<Option<usize>>,
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
        Callback::from(move |i: Option<usize>| {
            selected_group.set(None);
            on_select.emit(i)
        })
    };
    let select_group = {
        let (on_select, selected_group) = (props.on_select.clone(), selected_group.clone());
        Callback::from(move |g: Option<usize>| {
            on_select.emit(None);
            selected_group.set(g)
        })
    };

    let drawing_html = match (&d.layout, *list) {
        (Some(layout), false) => dag::dag(dag::DagProps {
            layout,
            drawing: &d,
            report: r,
            zoom: zoom.clone(),
            focus_group,
            group,
            op,
            select_op: select_op.clone(),
            select_group: select_group.clone(),
            scroller: scroller.clone(),
        }),
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
                select_op.reform(Some)
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
                    (None, Some(g)) => group_details(&d, r, g, select_group.clone(), select_op.reform(Some)),
                    (None, None) => html! { <p class="hint op-placeholder">{ "Select an op or a group (click, or Tab then Enter) to see its tensors, their sizes and why it is in its group. Hovering an op shows the reason too." }</p> },
                }
            }
            </aside>
        </div>
    }
}
