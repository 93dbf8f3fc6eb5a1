//! The trace classifier's rules ([`view::rules::rules_table`]) as a table, with a box
//! that says which rule classifies a kernel name: typed in, or sent by clicking a kernel row of
//! the trace tables (`kernel`). The rule that decides is marked in the table.

use yew::prelude::*;

use analysis::classify;
use page::ByAddress;
use table::DataTable;
use view::component_list;
use view::rules::rules_table;

use super::data_table::DataTableView;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// A kernel name to look up (from a kernel row); the box shows it when it changes.
    #[prop_or_default]
    pub kernel: Option<AttrValue>,
}

#[function_component(RulesView)]
pub fn rules_view(props: &Props) -> Html {
    let table = use_memo((), |()| ByAddress::<DataTable>::new(rules_table()));
    let query = use_state_eq(|| props.kernel.as_ref().map(|k| k.to_string()).unwrap_or_default());
    {
        let query = query.clone();
        use_effect_with(props.kernel.clone(), move |k| {
            if let Some(k) = k {
                query.set(k.to_string());
            }
        });
    }
    let on_input = {
        let query = query.clone();
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            query.set(input.value());
        })
    };
    let name = query.trim();
    let verdict = (!name.is_empty()).then(|| classify(name));
    let row = verdict.as_ref().and_then(|c| c.rule).and_then(|id| table.rows.iter().position(|r| r[1].exact == id));
    html! {
        <section class="rules-view" data-testid="rules-view" aria-labelledby="rules-h">
            <h3 id="rules-h">{ "Classifier rules" }</h3>
            <p class="hint">{ "Each kernel is classified by its name: base-name rules are tried first, in this order (first match wins); a generic launcher, or a name no base-name rule knows, goes on to the namespace and template-argument rules. Matching ignores case." }</p>
            <label class="rule-lookup" for="rule-kernel">
                { "Which rule classifies " }
                <input id="rule-kernel" type="search" value={(*query).clone()} oninput={on_input}
                    placeholder="a kernel name (or click a kernel row)" />
            </label>
            if let Some(c) = &verdict {
                <p class="rule-verdict" data-testid="rule-verdict" aria-live="polite">
                    {
                        match (c.rule, row) {
                            (Some(id), Some(r)) => format!("Rule {id} (order {}) decides: {}.", r + 1, component_list(&c.components)),
                            (Some(id), None) => format!("Rule {id} decides: {}.", component_list(&c.components)),
                            (None, _) => format!("No rule matches: the kernel counts as other, unless its profile records the HLO it ran (rule {}).", classify::HLO_RULE),
                        }
                    }
                </p>
            }
            <DataTableView table={(*table).clone()} selected={row} on_activate={None::<Callback<usize>>} />
        </section>
    }
}
