//! The kernel-group windows of a step or decoder layer ([`crate::fusion::dag`]) drawn as the
//! page draws op graphs' group DAG ([`draw::group_graph`]): each box's lines, its SVG, and the
//! details of a box.

use crate::fusion::dag::{DagWindow, BOX_LINE_CHARS};
use crate::fusion::{KernelGroup, TraceFusion};
use draw::group_graph::{group_drawing, BoxRows, GroupGraph};
use draw::layout::{longest_path_layers, Layout};

/// The lines a group's box lists: its ops; a library kernel that fused several parts under one
/// op lists the parts; a group without ops says what launched it, or that nothing did.
pub fn box_lines(g: &KernelGroup) -> Vec<String> {
    let cut = |s: &str| units::ellipsize(s, BOX_LINE_CHARS);
    if g.ops.len() <= 1 && g.parts.len() >= 2 {
        return g.parts.iter().map(|p| cut(p)).collect();
    }
    if !g.ops.is_empty() {
        return g.ops.iter().map(|o| cut(&o.op)).collect();
    }
    vec![match &g.launched_by {
        Some(op) => cut(op),
        None => "no CPU op".to_string(),
    }]
}

/// The graph and layout of a window: boxes sized by their lines, layered by the data edges.
pub fn window_drawing(w: &DagWindow, fusion: &TraceFusion) -> (GroupGraph, Layout) {
    let n = w.boxes.len();
    let mut preds = vec![Vec::new(); n];
    let mut succs = vec![Vec::new(); n];
    let mut edges = Vec::with_capacity(w.edges.len());
    for e in w.edges.iter().filter(|e| e.from < n && e.to < n && e.from < e.to) {
        preds[e.to].push(e.from);
        succs[e.from].push(e.to);
        edges.push((e.from, e.to));
    }
    // Edges go from a launch to a later one, so there is no cycle.
    let layer = longest_path_layers(n, &edges).unwrap_or_else(|_| vec![0; n]);
    let gg = GroupGraph { preds, succs, layer };
    let sizes: Vec<usize> =
        w.boxes.iter().map(|b| fusion.groups.get(b.group).map_or(1, |g| box_lines(g).len())).collect();
    let layout = group_drawing(&gg, &sizes);
    (gg, layout)
}

/// How many lines a box of `lines` lines shows (the cap of the op-graph drawing).
pub fn shown_lines(lines: usize) -> BoxRows {
    BoxRows::for_ops(lines)
}

/// A window drawn as SVG text (as the page's charts are: text is far smaller in the page's
/// bundle than a component tree): one `g.dag-group` per box (`data-box` from 1, `data-group`,
/// `data-kernel`), its head, its lines, and a `path.dag-edge` per edge. `marked` groups get the
/// `marked` class, the `selected` box the `selected` class.
pub fn window_svg(
    w: &DagWindow,
    fusion: &TraceFusion,
    test_id: &str,
    marked: &[usize],
    selected: Option<usize>,
) -> String {
    use draw::chart::escape_xml;
    use draw::group_graph::metrics::{BOX_WIDTH, HEAD_HEIGHT, OP_ROW_HEIGHT};
    use std::fmt::Write;
    use units::{ellipsize, format_bytes};
    let (_, layout) = window_drawing(w, fusion);
    let mut s = format!(
        r#"<svg class="dag" data-testid="{test_id}" role="group" aria-label="Kernel groups of the window as a data-flow graph" width="{:.0}" height="{:.0}" viewBox="0 0 {:.1} {:.1}"><defs><marker id="trace-dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="dag-arrow"/></marker></defs><g class="dag-edges">"#,
        layout.width, layout.height, layout.width, layout.height
    );
    for r in &layout.routes {
        let Some(e) = w.edges.iter().find(|e| e.from == r.from && e.to == r.to) else { continue };
        let mut d = format!("M{:.1},{:.1}", r.points[0].0, r.points[0].1);
        for p in r.points.windows(2) {
            let ((x0, y0), (x1, y1)) = (p[0], p[1]);
            let my = (y0 + y1) / 2.0;
            let _ = write!(d, " C{x0:.1},{my:.1} {x1:.1},{my:.1} {x1:.1},{y1:.1}");
        }
        let how = if e.exact { "execution trace" } else { "inferred from sizes" };
        let _ = write!(
            s,
            r#"<path class="dag-edge" d="{d}" marker-end="url(#trace-dag-arrow)" data-bytes="{}"><title>{} → {}: {} ({how})</title></path>"#,
            e.bytes,
            e.from + 1,
            e.to + 1,
            format_bytes(e.bytes)
        );
    }
    s += r#"</g><g class="dag-groups">"#;
    for (i, (p, b)) in layout.nodes.iter().zip(&w.boxes).enumerate() {
        let Some(g) = fusion.groups.get(b.group) else { continue };
        let lines = box_lines(g);
        let rows = shown_lines(lines.len());
        let class = format!(
            "dag-group {}{}{}",
            g.kind.id(),
            if selected == Some(i) { " selected" } else { "" },
            if marked.contains(&b.group) { " marked" } else { "" }
        );
        let fused = g.fused_bytes_per_call.map_or_else(|| "? B".to_string(), format_bytes);
        let _ = write!(
            s,
            r#"<g class="{class}" data-box="{}" data-group="{}" data-kernel="{}" transform="translate({:.1},{:.1})"><rect class="dag-box" width="{}" height="{}" rx="6"/><g class="dag-head" role="button" tabindex="0"><title>{} ({} this call; click for its bytes and tensors)</title><rect class="dag-head-bg" width="{}" height="{HEAD_HEIGHT}" rx="6"/><text class="dag-head-text" x="8" y="16">{} {}</text><text class="dag-head-bytes" x="{}" y="16" text-anchor="end">{fused}</text></g>"#,
            i + 1,
            b.group,
            escape_xml(&g.kernel),
            p.x,
            p.y,
            p.width,
            p.height,
            escape_xml(&g.kernel),
            units::format_duration_us(b.dur_us),
            p.width,
            i + 1,
            escape_xml(&ellipsize(&classify::family::table_name(&g.kernel, 40), head_chars(i + 1, &fused))),
            BOX_WIDTH - 8.0,
        );
        for (k, line) in lines.iter().take(rows.shown).enumerate() {
            let y = HEAD_HEIGHT + k as f64 * OP_ROW_HEIGHT + 13.0;
            let _ = write!(s, r#"<text class="op-name" x="8" y="{y}">{}</text>"#, escape_xml(&ellipsize(line, 28)));
        }
        if rows.more > 0 {
            let y = HEAD_HEIGHT + rows.shown as f64 * OP_ROW_HEIGHT + 13.0;
            let _ = write!(s, r#"<text class="dag-more" x="8" y="{y}">+ {} more (click the box)</text>"#, rows.more);
        }
        s += "</g>";
    }
    s += "</g></svg>";
    s
}

/// Characters of the kernel's name a box's head has room for beside its number and its bytes
/// (the head holds about 23 characters of the label font): a two-digit number or a wide byte
/// figure takes them from the name, so the two never overlap.
fn head_chars(number: usize, bytes: &str) -> usize {
    const HEAD: usize = 23;
    let taken = number.to_string().len() + 1 + bytes.chars().count() + 1;
    HEAD.saturating_sub(taken).max(4)
}

/// The details of box `i` of a window as HTML text: its group's kind, calls and time, bytes per
/// call and how they were known, parts, launching op, and each op's recorded input dims and
/// types.
pub fn box_details_html(w: &DagWindow, fusion: &TraceFusion, i: usize, suffix: &str) -> Option<String> {
    use draw::chart::escape_xml;
    use std::fmt::Write;
    use units::{format_bytes, format_duration_us};
    let b = w.boxes.get(i)?;
    let g = fusion.groups.get(b.group)?;
    let known = |x: Option<u64>| x.map_or_else(|| "unknown".to_string(), format_bytes);
    let saved = g.unfused_bytes_per_call.zip(g.fused_bytes_per_call).map(|(u, f)| u.saturating_sub(f));
    let mut s = format!(
        r#"<section class="op-details" aria-live="polite" data-testid="dag-box-details{suffix}"><h3>Kernel {} of the window: {}</h3><p>{} ({}); {} in the trace, {} in all, this call {}.</p><p data-testid="dag-box-bytes{suffix}">Per call: fused {}, unfused {}, fusion saved {}. Known from: {}{}.</p>"#,
        i + 1,
        escape_xml(&classify::family::table_name(&g.kernel, 80)),
        g.kind.id(),
        g.category,
        units::plural(g.calls, "call", "calls"),
        format_duration_us(g.time_us),
        format_duration_us(b.dur_us),
        known(g.fused_bytes_per_call),
        known(g.unfused_bytes_per_call),
        known(saved),
        g.how.text(),
        g.unknown.as_ref().map(|u| format!(" ({}: {})", u.cause.text(), escape_xml(&u.why))).unwrap_or_default()
    );
    if g.parts.len() >= 2 {
        let _ = write!(s, "<p>Parts it fused: {}.</p>", escape_xml(&g.parts.join(" + ")));
    }
    if let Some(op) = &g.launched_by {
        let _ = write!(s, "<p>Launched by {}.</p>", escape_xml(op));
    }
    if !g.ops.is_empty() {
        s += r#"<div class="table-wrap"><table class="tensors"><caption>Ops and their input tensors (dims, types) as the trace recorded them</caption><thead><tr><th scope="col">op</th><th scope="col">input dims</th><th scope="col">input types</th></tr></thead><tbody>"#;
        let text = |v: &serde_json::Value| if v.is_null() { "not recorded".to_string() } else { v.to_string() };
        for o in &g.ops {
            let _ = write!(
                s,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td></tr>",
                escape_xml(&o.op),
                escape_xml(&text(&o.input_dims)),
                escape_xml(&text(&o.input_types))
            );
        }
        s += "</tbody></table></div>";
    }
    s += "</section>";
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_head_gives_its_name_the_room_its_number_and_bytes_leave() {
        // Box 1 with "52.41 MiB": the 11 characters the head always had; box 39 with "71.01 MiB"
        // (the Qwen H100 layer where the two overlapped): one fewer; a long byte figure takes more;
        // never fewer than 4.
        assert_eq!(head_chars(1, "52.41 MiB"), 11);
        assert_eq!(head_chars(39, "71.01 MiB"), 10);
        assert_eq!(head_chars(7, "1,023.99 KiB"), 8);
        assert_eq!(head_chars(123_456, "1,023.99 KiB"), 4);
    }
}
