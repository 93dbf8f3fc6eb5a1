//! The classifier's rule table as the page shows it ("Show the classifier rules").

use classify::{rules, Pattern, Scope};
use table::{Cell, DataTable};

use super::{component_list, kernel_cell};
use trace::platform::{vendor_of_name, Vendor};

/// The classifier's rule table ([`classify::rules()`]) as the page shows it: one row per
/// rule in the order they are tried (base-name rules first, then namespace and template
/// argument rules, each scope first match wins), with where and how it matches, the
/// categories it decides, the vendor whose library names its example kernel (by the vendor
/// hints of [`trace::platform`]; the rules themselves apply to every vendor) and what it is for.
pub fn rules_table() -> DataTable {
    let mut t = DataTable::new(
        "rules",
        "Classifier rules, in the order they are tried",
        &[
            ("order", true),
            ("rule", false),
            ("matches", false),
            ("category", false),
            ("example vendor", false),
            ("notes", false),
            ("example", false),
        ],
    );
    for (i, r) in rules_in_trial_order().enumerate() {
        let category = if r.pattern == Pattern::Inductor {
            "from the fused op words".to_string()
        } else {
            let mut c = component_list(r.components);
            if r.launcher {
                c += " (if nothing further matches)";
            }
            if r.epilogue {
                c += " + epilogue words";
            }
            c
        };
        let vendor = match vendor_of_name(r.example) {
            // The example's name does not say: no vendor's library prefix, or both.
            Vendor::Unknown => "—".to_string(),
            v => v.to_string(),
        };
        t.rows.push(vec![
            Cell::count(i as u64 + 1),
            Cell::text(r.id),
            Cell::long_text(&r.describe_match(), RULE_TEXT_WIDTH),
            Cell::text(category),
            Cell::text(vendor),
            Cell::long_text(r.description, RULE_TEXT_WIDTH),
            kernel_cell(r.example),
        ]);
    }
    t
}

/// The rules in the order [`analysis::classify()`] tries them: base-name rules, then namespace
/// rules, then template-argument rules, each scope in table order.
pub fn rules_in_trial_order() -> impl Iterator<Item = &'static classify::Rule> {
    [Scope::BaseName, Scope::Namespace, Scope::Inner]
        .into_iter()
        .flat_map(|scope| rules().iter().filter(move |r| r.scope == scope))
}

/// Rule patterns and notes are shortened to this many characters in cells (whole in the tooltip).
const RULE_TEXT_WIDTH: usize = 48;

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::classify;

    #[test]
    fn rules_table_lists_every_rule_in_trial_order() {
        let t = rules_table();
        assert_eq!(t.rows.len(), rules().len());
        let ids: Vec<&str> = t.rows.iter().map(|r| r[1].text.as_str()).collect();
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ids.len(), "a rule is listed twice");
        // Scopes in the order they are tried, and the order column counts from 1.
        let scope = |id: &str| rules().iter().find(|r| r.id == id).unwrap().scope as usize;
        assert!(ids.windows(2).all(|w| scope(w[0]) <= scope(w[1])));
        assert!(t.rows.iter().enumerate().all(|(i, r)| r[0].sort == (i + 1) as f64));
        // Every example is decided by its own rule (a launcher's by what its arguments name).
        for r in &t.rows {
            let launcher = rules().iter().any(|rule| rule.id == r[1].text && rule.launcher);
            let c = classify(&r[6].exact);
            if !launcher {
                assert_eq!(c.rule, Some(r[1].exact.as_str()), "example of {}", r[1].text);
            }
        }
        let row = |id: &str| t.rows.iter().find(|r| r[1].text == id).unwrap();
        assert_eq!(row("gemm-tensile")[4].text, "AMD");
        assert_eq!(row("gemm-nvjet")[4].text, "NVIDIA");
        assert_eq!(row("collective-nccl")[4].text, "—");
        assert_eq!(row("inductor-fused")[3].text, "from the fused op words");
        assert!(row("gemm-nvjet")[3].text.starts_with("gemm"));
        // Long notes are shortened on screen, whole in the tooltip and CSV.
        let notes = &row("inductor-fused")[5];
        assert!(notes.text.chars().count() <= RULE_TEXT_WIDTH && notes.exact.len() > notes.text.len());
    }
}
