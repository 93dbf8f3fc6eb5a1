//! The kernel-group windows of a step or decoder layer ([`analysis::trace_fusion::dag`]) drawn as the
//! page draws op graphs' group DAG ([`draw::group_graph`]): each box's lines, its SVG, and the
//! details of a box.

use analysis::trace_fusion::dag::{DagWindow, BOX_LINE_CHARS};
use analysis::trace_fusion::{KernelGroup, TraceFusion};
use draw::group_graph::{group_drawing_heights_loose_below, BoxRows, GroupGraph};
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

/// Width of a box's text, px: its 196 less the margins.
const TEXT_WIDTH: f64 = 180.0;

/// The drawing's label font, px.
const FONT: f64 = 11.5;

/// Width of `c` in the label font, px ([`draw::text`]).
fn char_width(c: char) -> f64 {
    draw::text::advance_em(c) * FONT
}

/// How much wider bold is than the regular weight (DejaVu Sans Bold, measured: 196 px against
/// 175 for one line): a head's number is bold, its name regular, so that two lines hold it.
const BOLD: f64 = 1.13;

/// Width of `s` in the label font, px.
fn text_width(s: &str) -> f64 {
    draw::text::width(s, FONT)
}

/// `s` cut to `width` px, an ellipsis ending what was cut.
fn fit(s: &str, width: f64) -> String {
    draw::text::fit(s, width, FONT)
}

/// The head of box `number` (from 1): its number and its kernel's name read out
/// ([`classify::family::box_name`]: the library, the tile, the ops), wrapped at word ends onto
/// at most two lines of the box's width, so that no box cuts a name in the middle.
pub fn head_lines(number: usize, kernel: &str) -> Vec<String> {
    let text = format!("{number} {}", classify::family::box_name(kernel, 80));
    let bold_extra = text_width(&number.to_string()) * (BOLD - 1.0);
    wrap(&text, TEXT_WIDTH - bold_extra, 2)
}

/// `text` in lines of at most `width` px, broken after a space, `_`, `,` or `:` in the line's
/// second half, else anywhere; at most `max` lines, the last ending in an ellipsis if the text
/// goes on.
fn wrap(text: &str, width: f64, max: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut lines = Vec::new();
    let mut at = 0;
    while at < chars.len() && lines.len() < max {
        let rest: String = chars[at..].iter().collect();
        if text_width(&rest) <= width {
            lines.push(rest);
            break;
        }
        if lines.len() + 1 == max {
            lines.push(fit(&rest, width));
            break;
        }
        // The longest prefix that fits, then the last break point in its second half.
        let (mut end, mut used) = (at, 0.0);
        while end < chars.len() && used + char_width(chars[end]) <= width {
            used += char_width(chars[end]);
            end += 1;
        }
        let half = at + (end - at) / 2;
        let end = (half..end).rev().find(|&i| matches!(chars[i], ' ' | '_' | ',' | ':')).map_or(end, |i| i + 1);
        lines.push(chars[at..end].iter().collect::<String>().trim_end().to_string());
        at = end.max(at + 1);
        while at < chars.len() && chars[at] == ' ' {
            at += 1;
        }
    }
    lines
}

/// A box's height: its head (one or two lines), its traffic line, and its op lines as the
/// op-graph drawing caps them.
fn box_height(head_lines: usize, ops: usize) -> f64 {
    use draw::group_graph::metrics::OP_ROW_HEIGHT;
    shown_lines(ops).height() + head_lines.max(1) as f64 * OP_ROW_HEIGHT
}

/// The graph and layout of a window: boxes sized by their lines, layered by the data edges,
/// the boxes that share no tensor with another drawn one in rows below.
pub fn window_drawing(w: &DagWindow, fusion: &TraceFusion) -> (GroupGraph, Layout) {
    let n = w.boxes.len();
    let mut preds = vec![Vec::new(); n];
    let mut succs = vec![Vec::new(); n];
    let mut edges = Vec::with_capacity(w.edges.len());
    for e in drawn_edges(w) {
        preds[e.to].push(e.from);
        succs[e.from].push(e.to);
        edges.push((e.from, e.to));
    }
    // Edges go from a launch to a later one, so there is no cycle.
    let layer = longest_path_layers(n, &edges).unwrap_or_else(|_| vec![0; n]);
    let gg = GroupGraph { preds, succs, layer };
    let heights: Vec<f64> = w
        .boxes
        .iter()
        .enumerate()
        .map(|(i, b)| match fusion.groups.get(b.group) {
            Some(g) => box_height(head_lines(i + 1, &g.kernel).len(), box_lines(g).len()),
            None => box_height(1, 1),
        })
        .collect();
    let layout = group_drawing_heights_loose_below(&gg, &heights);
    (gg, layout)
}

/// The window's edges the drawing draws: between two of its boxes, from a launch to a later one.
fn drawn_edges(w: &DagWindow) -> impl Iterator<Item = &analysis::trace_fusion::dag::DagEdge> {
    let n = w.boxes.len();
    w.edges.iter().filter(move |e| e.from < n && e.to < n && e.from < e.to)
}

/// How many of the window's boxes share no tensor with another drawn box: the drawing puts
/// them in rows below the linked ones.
pub fn loose_boxes(w: &DagWindow) -> usize {
    let mut linked = vec![false; w.boxes.len()];
    for e in drawn_edges(w) {
        linked[e.from] = true;
        linked[e.to] = true;
    }
    linked.iter().filter(|&&l| !l).count()
}

/// How many lines a box of `lines` lines shows (the cap of the op-graph drawing).
pub fn shown_lines(lines: usize) -> BoxRows {
    BoxRows::for_ops(lines)
}

/// A window drawn as SVG text (as the page's charts are: text is far smaller in the page's
/// bundle than a component tree): one `g.dag-group` per box (`data-box` from 1, `data-group`,
/// `data-kernel`), its head (number and name), its traffic (fused bytes of one call, the call's
/// time, and a bar of fused against unfused bytes), its lines, and a `path.dag-edge` per edge.
/// `marked` groups get the `marked` class, the `selected` box the `selected` class. `scale`
/// sizes the drawing on the page (its zoom), the drawing's own units unchanged.
pub fn window_svg(
    w: &DagWindow,
    fusion: &TraceFusion,
    test_id: &str,
    marked: &[usize],
    selected: Option<usize>,
    scale: f64,
) -> String {
    use draw::chart::escape_xml;
    use draw::group_graph::metrics::{BOX_WIDTH, HEAD_HEIGHT, OP_ROW_HEIGHT};
    use std::fmt::Write;
    use units::format_bytes;
    let (_, layout) = window_drawing(w, fusion);
    let mut s = format!(
        r#"<svg class="dag" data-testid="{test_id}" role="group" aria-label="Kernel groups of the window as a data-flow graph" width="{:.0}" height="{:.0}" viewBox="0 0 {:.1} {:.1}"><defs><marker id="trace-dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="dag-arrow"/></marker></defs><g class="dag-edges">"#,
        layout.width * scale,
        layout.height * scale,
        layout.width,
        layout.height
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
        let head = head_lines(i + 1, &g.kernel);
        let head_height = HEAD_HEIGHT + head.len().saturating_sub(1) as f64 * OP_ROW_HEIGHT;
        let class = format!(
            "dag-group {}{}{}",
            g.kind.id(),
            if selected == Some(i) { " selected" } else { "" },
            if marked.contains(&b.group) { " marked" } else { "" }
        );
        let _ = write!(
            s,
            r#"<g class="{class}" data-box="{}" data-group="{}" data-kernel="{}" transform="translate({:.1},{:.1})"><rect class="dag-box" width="{}" height="{}" rx="6"/><g class="dag-head" role="button" tabindex="0"><title>{} ({} this call; click for its bytes and tensors)</title><rect class="dag-head-bg" width="{}" height="{head_height}" rx="6"/>"#,
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
        );
        let number = format!("{} ", i + 1);
        for (k, line) in head.iter().enumerate() {
            let y = 16.0 + k as f64 * OP_ROW_HEIGHT;
            let _ = match line.strip_prefix(&number).filter(|_| k == 0) {
                Some(name) => write!(
                    s,
                    r#"<text class="dag-head-text" x="8" y="{y}"><tspan class="dag-number">{}</tspan> {}</text>"#,
                    i + 1,
                    escape_xml(name)
                ),
                None => write!(s, r#"<text class="dag-head-text" x="8" y="{y}">{}</text>"#, escape_xml(line)),
            };
        }
        s += "</g>";
        s += &traffic_line(g, b.dur_us, head_height + 13.0, BOX_WIDTH);
        let top = head_height + OP_ROW_HEIGHT;
        for (k, line) in lines.iter().take(rows.shown).enumerate() {
            let y = top + k as f64 * OP_ROW_HEIGHT + 13.0;
            let _ = write!(s, r#"<text class="op-name" x="8" y="{y}">{}</text>"#, escape_xml(&fit(line, TEXT_WIDTH)));
        }
        if rows.more > 0 {
            let y = top + rows.shown as f64 * OP_ROW_HEIGHT + 13.0;
            let _ = write!(s, r#"<text class="dag-more" x="8" y="{y}">+ {} more (click the box)</text>"#, rows.more);
        }
        s += "</g>";
    }
    s += "</g></svg>";
    s
}

/// Width of a box's traffic bar, px, and the gap before it.
const BAR_WIDTH: f64 = 40.0;
const BAR_GAP: f64 = 6.0;

/// A box's traffic line at baseline `y`: the fused bytes of one call and the call's time (the
/// bytes alone where both would reach the bar), and a bar whose full length is the unfused
/// bytes and whose filled part the fused ones (what the kernel moves of what its parts would
/// move apart). Bytes not known: said, and no bar.
fn traffic_line(g: &KernelGroup, dur_us: f64, y: f64, box_width: f64) -> String {
    use units::{format_bytes, format_duration_us};
    let Some(fused) = g.fused_bytes_per_call else {
        return format!(
            r#"<g class="dag-traffic"><text class="dag-head-bytes" x="8" y="{y}">{}</text></g>"#,
            fit(&format!("bytes unknown · {}", format_duration_us(dur_us)), TEXT_WIDTH)
        );
    };
    let unfused = g.unfused_bytes_per_call.filter(|&u| u > 0);
    let room = if unfused.is_some() { TEXT_WIDTH - BAR_WIDTH - BAR_GAP } else { TEXT_WIDTH };
    let both = format!("{} · {}", format_bytes(fused), format_duration_us(dur_us));
    let text = if text_width(&both) <= room { both } else { fit(&format_bytes(fused), room) };
    let mut s = format!(r#"<g class="dag-traffic"><text class="dag-head-bytes" x="8" y="{y}">{text}</text>"#);
    if let Some(unfused) = unfused {
        let share = (fused as f64 / unfused as f64).clamp(0.0, 1.0);
        let (x, top) = (box_width - 8.0 - BAR_WIDTH, y - 7.0);
        s += &format!(
            r#"<rect class="dag-bar-unfused" x="{x:.1}" y="{top:.1}" width="{BAR_WIDTH}" height="7" rx="2"><title>fused {} of {} unfused: fusion saves {} a call</title></rect><rect class="dag-bar-fused" x="{x:.1}" y="{top:.1}" width="{:.1}" height="7" rx="2"/>"#,
            format_bytes(fused),
            format_bytes(unfused),
            format_bytes(unfused.saturating_sub(fused)),
            BAR_WIDTH * share,
        );
    }
    s + "</g>"
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
mod tests;
