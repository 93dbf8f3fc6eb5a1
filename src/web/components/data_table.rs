//! A table ([`table::DataTable`]) drawn virtualised: every row is sortable (click a
//! column header) and filterable (the text box), but only the rows in view plus a margin are in
//! the page ([`table::window::row_window`]), with blank rows of the right height above and
//! below, so that 100,000 rows scroll as smoothly as 100. The header stays at the top of the
//! scroll box; the box scrolls with the keyboard (it takes focus), and rows that can be opened
//! (`on_activate`) take focus and open on Enter. A table wider than its panel first narrows its
//! long text cells (the whole text on hover), then hides columns until it fits, text columns
//! from the right first, then numbers from the right (never the first); a "Columns" chooser
//! lists every column, so what is hidden is one click away. When the window's width changes,
//! the fitting starts over (unless the reader has picked the columns).

use yew::prelude::*;

use page::ByAddress;
use table::window::row_window;
use table::{DataTable, SortBy};

/// Height of every body row in pixels (the stylesheet's `.data-table tbody tr` says the same).
pub const ROW_HEIGHT: f64 = 28.0;
/// Rows drawn above and below the view.
const OVERSCAN: usize = 12;
/// Height of the scroll box before it is measured (the stylesheet's `max-height: 32rem`).
const DEFAULT_VIEW: f64 = 512.0;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub table: ByAddress<DataTable>,
    /// Called with a row's index in the table when the row is clicked or Enter is pressed on it.
    #[prop_or_default]
    pub on_activate: Option<Callback<usize>>,
    /// The row (index in the table) to mark as selected.
    #[prop_or_default]
    pub selected: Option<usize>,
    /// A line under the table (totals, a note).
    #[prop_or_default]
    pub footer: Option<AttrValue>,
}

#[function_component(DataTableView)]
pub fn data_table_view(props: &Props) -> Html {
    let table = &props.table;
    let sort = use_state_eq(|| None::<SortBy>);
    let filter = use_state_eq(String::new);
    // The first row scrolled to and the box's height: re-drawn only when the first row changes.
    let scroll = use_state_eq(|| (0usize, DEFAULT_VIEW));
    let wrap = use_node_ref();
    // Columns hidden, and whether they are still chosen by fitting (until the reader picks).
    let hidden = use_state_eq(Vec::<usize>::new);
    let fitting = use_state_eq(|| true);
    let narrow = use_state_eq(|| false);
    let width = use_window_width();
    // The window width the columns were fitted at.
    let fitted_at = use_mut_ref(|| width);
    {
        let (wrap, hidden, fitting, narrow) = (wrap.clone(), hidden.clone(), fitting.clone(), narrow.clone());
        let table = table.clone();
        let deps = ((*hidden).clone(), *fitting, *narrow, table.id, table.rows.len(), width);
        use_effect_with(deps, move |(now, fit, was_narrow, _, _, width)| {
            // A new width: fitting starts over from every column, narrowing or widening alike
            // (the next render runs this again, from there).
            if *fitted_at.borrow() != *width {
                *fitted_at.borrow_mut() = *width;
                if *fit && (!now.is_empty() || *was_narrow) {
                    hidden.set(Vec::new());
                    narrow.set(false);
                    return;
                }
            }
            let overflows = wrap.cast::<web_sys::Element>().is_some_and(|el| el.scroll_width() > el.client_width() + 1);
            if *fit && overflows && !*narrow {
                narrow.set(true);
            } else if *fit && overflows {
                if let Some(next) = table.column_to_hide(now) {
                    let mut more = now.clone();
                    more.push(next);
                    hidden.set(more);
                }
            }
        });
    }
    let rows = {
        let (table, s, f) = (table.clone(), *sort, (*filter).clone());
        use_memo((table, s, f), |(t, s, f)| t.view(*s, f))
    };
    let on_scroll = {
        let scroll = scroll.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::Element = e.target_unchecked_into();
            let first = (f64::from(el.scroll_top()) / ROW_HEIGHT).floor().max(0.0) as usize;
            let view = f64::from(el.client_height());
            scroll.set((first, if view > 0.0 { view } else { DEFAULT_VIEW }));
        })
    };
    let on_filter = {
        let (filter, wrap) = (filter.clone(), wrap.clone());
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            filter.set(input.value());
            // A new filter starts at the top of its rows.
            if let Some(el) = wrap.cast::<web_sys::Element>() {
                el.set_scroll_top(0);
            }
        })
    };
    let is_hidden = |i: usize| hidden.contains(&i);
    let header = table.columns.iter().enumerate().map(|(i, c)| {
        let current = sort.filter(|s| s.column == i);
        let onclick = {
            let sort = sort.clone();
            let numeric = c.numeric;
            Callback::from(move |_| {
                // First click: numbers largest first, text A to Z; then toggle.
                let descending = match current {
                    Some(s) => !s.descending,
                    None => numeric,
                };
                sort.set(Some(SortBy { column: i, descending }))
            })
        };
        let (aria, arrow) = match current {
            Some(SortBy { descending: true, .. }) => ("descending", " ▼"),
            Some(_) => ("ascending", " ▲"),
            None => ("none", ""),
        };
        html! {
            <th scope="col" class={classes!(c.numeric.then_some("num"), is_hidden(i).then_some("col-hidden"))} aria-sort={aria}>
                <button type="button" class="sort" {onclick} title={format!("Sort by {}", c.header)}>
                    { format!("{}{arrow}", c.header) }
                </button>
            </th>
        }
    });
    let (first, view) = *scroll;
    let w = row_window(rows.len(), ROW_HEIGHT, first as f64 * ROW_HEIGHT, view, OVERSCAN);
    let body = rows[w.start..w.end].iter().enumerate().map(|(k, &r)| {
        let position = w.start + k;
        let cells = table.rows[r].iter().zip(&table.columns).enumerate().map(|(i, (cell, col))| {
            let title = (cell.exact != cell.text && !col.numeric).then(|| cell.exact.clone());
            let class = classes!(col.numeric.then_some("num"), is_hidden(i).then_some("col-hidden"));
            html! { <td {class} {title}>{ cell.text.clone() }</td> }
        });
        let parity = if position % 2 == 1 { "alt" } else { "" };
        match &props.on_activate {
            Some(on_activate) => {
                let selected = props.selected == Some(r);
                let onclick = {
                    let on_activate = on_activate.clone();
                    Callback::from(move |_| on_activate.emit(r))
                };
                let onkeydown = {
                    let on_activate = on_activate.clone();
                    Callback::from(move |e: KeyboardEvent| {
                        if e.key() == "Enter" || e.key() == " " {
                            e.prevent_default();
                            on_activate.emit(r)
                        }
                    })
                };
                html! {
                    <tr key={r} class={classes!("active-row", parity, selected.then_some("selected"))} tabindex="0"
                        aria-rowindex={(position + 2).to_string()} aria-selected={selected.to_string()} {onclick} {onkeydown}>
                        { for cells }
                    </tr>
                }
            }
            None => {
                let selected = props.selected == Some(r);
                html! { <tr key={r} class={classes!(parity, selected.then_some("selected"))} aria-rowindex={(position + 2).to_string()}>{ for cells }</tr> }
            }
        }
    });
    let filter_id = format!("filter-{}", table.id);
    if table.rows.is_empty() {
        return html! {
            <section class="data-table" data-testid={format!("table-{}", table.id)}>
                <h3>{ table.title.clone() }</h3>
                <p class="hint" data-testid="row-count">{ "None found." }</p>
            </section>
        };
    }
    let columns = table.columns.len().to_string();
    html! {
        <section class={classes!("data-table", narrow.then_some("narrow"))} data-testid={format!("table-{}", table.id)}>
            <div class="table-head">
                <h3 id={format!("title-{}", table.id)}>{ table.title.clone() }</h3>
                <label for={filter_id.clone()} class="filter">
                    { "Filter " }
                    <input id={filter_id} type="search" value={(*filter).clone()} oninput={on_filter}
                        placeholder="any text in a row" />
                </label>
                if !hidden.is_empty() || !*fitting {
                    { chooser(table, &hidden, &fitting) }
                }
            </div>
            <div class="table-wrap vscroll" ref={wrap} onscroll={on_scroll} tabindex="0"
                aria-label={format!("{} (scrolls)", table.title)}>
                <table role="table" aria-labelledby={format!("title-{}", table.id)}
                    aria-rowcount={(rows.len() + 1).to_string()} aria-colcount={columns.clone()}>
                    <thead><tr aria-rowindex="1">{ for header }</tr></thead>
                    <tbody>
                        if w.space_above > 0.0 {
                            <tr class="spacer" aria-hidden="true" style={format!("height: {}px", w.space_above)}><td colspan={columns.clone()}></td></tr>
                        }
                        { for body }
                        if w.space_below > 0.0 {
                            <tr class="spacer" aria-hidden="true" style={format!("height: {}px", w.space_below)}><td colspan={columns}></td></tr>
                        }
                    </tbody>
                </table>
            </div>
            <p class="hint table-count" data-testid="row-count">
                { table.row_count(rows.len()) }
                if let Some(footer) = &props.footer { { " " }{ footer.clone() } }
            </p>
        </section>
    }
}

/// "Columns": a checkbox per column; picking one stops the fitting, so the choice stays.
fn chooser(table: &DataTable, hidden: &UseStateHandle<Vec<usize>>, fitting: &UseStateHandle<bool>) -> Html {
    let boxes = table.columns.iter().enumerate().map(|(i, c)| {
        let onchange = {
            let (hidden, fitting) = (hidden.clone(), fitting.clone());
            Callback::from(move |_| {
                let mut now = (*hidden).clone();
                match now.iter().position(|&h| h == i) {
                    Some(at) => {
                        now.remove(at);
                    }
                    None => now.push(i),
                }
                fitting.set(false);
                hidden.set(now);
            })
        };
        html! {
            <label><input type="checkbox" checked={!hidden.contains(&i)} {onchange} />{ c.header.clone() }</label>
        }
    });
    let summary = match hidden.len() {
        0 => "Columns".to_string(),
        1 => "Columns (1 hidden to fit)".to_string(),
        n => format!("Columns ({n} hidden to fit)"),
    };
    html! {
        <details class="columns" data-testid="column-chooser">
            <summary>{ summary }</summary>
            <div class="column-list">{ for boxes }</div>
        </details>
    }
}

/// The window's inner width in steps of [`WIDTH_STEP`] pixels, kept current by a `resize`
/// listener while the component is mounted (a step, so that dragging the window's edge does not
/// re-fit at every pixel).
#[hook]
fn use_window_width() -> i32 {
    let width = use_state_eq(window_width);
    {
        let width = width.clone();
        use_effect_with((), move |_| {
            use wasm_bindgen::JsCast;
            let listener = wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || width.set(window_width()));
            let window = web_sys::window();
            if let Some(w) = &window {
                let _ = w.add_event_listener_with_callback("resize", listener.as_ref().unchecked_ref());
            }
            move || {
                if let Some(w) = &window {
                    let _ = w.remove_event_listener_with_callback("resize", listener.as_ref().unchecked_ref());
                }
                drop(listener);
            }
        });
    }
    *width
}

/// Pixels of window width that count as one width for fitting.
const WIDTH_STEP: i32 = 16;

fn window_width() -> i32 {
    let px = web_sys::window().and_then(|w| w.inner_width().ok()).and_then(|v| v.as_f64()).unwrap_or(0.0);
    (px as i32) / WIDTH_STEP * WIDTH_STEP
}
