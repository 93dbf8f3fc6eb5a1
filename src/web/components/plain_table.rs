//! A core [`Table`] as an HTML table: the same cells the command line prints and the CSV
//! exports carry, right-aligned where the core says the column is numeric.

use yew::prelude::*;

use table::{Align, Table};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub table: Table,
    pub caption: AttrValue,
    /// `data-testid` of the table.
    pub id: AttrValue,
    /// Rows drawn at most (the exports carry every row).
    #[prop_or(1000)]
    pub max_rows: usize,
    /// A class per row (e.g. to flag a row), by index; rows past its end get none.
    #[prop_or_default]
    pub row_classes: Vec<Option<&'static str>>,
}

#[function_component(PlainTable)]
pub fn plain_table(props: &Props) -> Html {
    let t = &props.table;
    let class = |i: usize| if t.align.get(i) == Some(&Align::Right) { Some("num") } else { None };
    html! {
        <div class="table-wrap">
            <table data-testid={props.id.clone()}>
                <caption>{ props.caption.clone() }</caption>
                <thead><tr>
                    { for t.headers.iter().enumerate().map(|(i, h)| html! { <th scope="col" class={classes!(class(i))}>{ h.clone() }</th> }) }
                </tr></thead>
                <tbody>
                    { for t.rows.iter().take(props.max_rows).enumerate().map(|(r, row)| html! {
                        <tr class={classes!(props.row_classes.get(r).copied().flatten())}>
                            { for row.iter().enumerate().map(|(i, c)| html! { <td class={classes!(class(i))}>{ c.clone() }</td> }) }
                        </tr>
                    }) }
                </tbody>
            </table>
            if t.rows.len() > props.max_rows {
                <p class="hint">{ format!("The table shows the first {} of {} rows; the CSV export has them all.", props.max_rows, t.rows.len()) }</p>
            }
        </div>
    }
}
