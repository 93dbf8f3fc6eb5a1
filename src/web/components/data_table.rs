//! A table of trace results ([`crate::trace::view::DataTable`]): sortable by clicking a column
//! header, filterable by a text box, and drawing at most [`MAX_DRAWN`] rows so that a
//! 100,000-row mapping never freezes the page (the CSV export has every row).

use yew::prelude::*;

use crate::trace::view::{DataTable, SortBy};
use crate::units::group_digits;
use crate::web::shared::Shared;

/// Rows drawn at most; the rest are counted under the table.
pub const MAX_DRAWN: usize = 300;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub table: Shared<DataTable>,
}

#[function_component(DataTableView)]
pub fn data_table_view(props: &Props) -> Html {
    let table = &props.table;
    let sort = use_state_eq(|| None::<SortBy>);
    let filter = use_state_eq(String::new);
    let rows = {
        let (table, s, f) = (table.clone(), *sort, (*filter).clone());
        use_memo((table, s, f), |(t, s, f)| t.view(*s, f))
    };
    let on_filter = {
        let filter = filter.clone();
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            filter.set(input.value());
        })
    };
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
        let aria = match current {
            Some(SortBy { descending: true, .. }) => "descending",
            Some(_) => "ascending",
            None => "none",
        };
        let arrow = match current {
            Some(SortBy { descending: true, .. }) => " ▼",
            Some(_) => " ▲",
            None => "",
        };
        html! {
            <th scope="col" class={classes!(c.numeric.then_some("num"))} aria-sort={aria}>
                <button type="button" class="sort" {onclick} title={format!("Sort by {}", c.header)}>
                    { format!("{}{arrow}", c.header) }
                </button>
            </th>
        }
    });
    let shown = rows.len().min(MAX_DRAWN);
    let body = rows.iter().take(MAX_DRAWN).map(|&r| {
        let cells = table.rows[r].iter().zip(&table.columns).map(|(cell, col)| {
            let title = (cell.exact != cell.text && !col.numeric).then(|| cell.exact.clone());
            html! { <td class={classes!(col.numeric.then_some("num"))} {title}>{ cell.text.clone() }</td> }
        });
        html! { <tr>{ for cells }</tr> }
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
    html! {
        <section class="data-table" data-testid={format!("table-{}", table.id)}>
            <div class="table-head">
                <h3>{ table.title.clone() }</h3>
                <label for={filter_id.clone()} class="filter">
                    { "Filter " }
                    <input id={filter_id} type="search" value={(*filter).clone()} oninput={on_filter}
                        placeholder="any text in a row" />
                </label>
            </div>
            <div class="table-wrap">
                <table>
                    <thead><tr>{ for header }</tr></thead>
                    <tbody>{ for body }</tbody>
                </table>
            </div>
            <p class="hint table-count" data-testid="row-count">
                {
                    if rows.len() > shown {
                        format!("Showing {} of {} matching rows ({} in all); filter to narrow them, or export the CSV for every row.",
                            group_digits(shown as u64), group_digits(rows.len() as u64), group_digits(table.rows.len() as u64))
                    } else if rows.len() < table.rows.len() {
                        format!("{} of {} rows match.", group_digits(rows.len() as u64), group_digits(table.rows.len() as u64))
                    } else {
                        format!("{} rows.", group_digits(rows.len() as u64))
                    }
                }
            </p>
        </section>
    }
}
