//! Execution times of trace replays as a bar chart, as in figure 8 of Rocher-Gonzalez et al.
//! (docs/references.md): one bar per routing mode and queuing scheme for the replay alone, and on
//! it an error bar up to the same replay's time beside an incast, the incast's overhead.

use super::sweep_svg::round_step;
use super::{COLOURS, escape, svg_start, trim};
use std::fmt::Write as _;

/// One bar: a technique's execution time in seconds without and with the incast, each when a run
/// of it finished.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutionBar {
    /// Routing mode and queuing scheme.
    pub label: String,
    /// The replay alone.
    pub alone: Option<f64>,
    /// The replay beside the incast.
    pub with_incast: Option<f64>,
}

/// The bar chart of `bars` in their order, seconds up from 0. A bar without a run alone is not
/// drawn (its label says so); an error bar is drawn where both runs finished, its overhead
/// written above it.
pub fn execution_plot_svg(title: &str, bars: &[ExecutionBar]) -> String {
    let n = bars.len().max(1) as f64;
    let slot = 90.0;
    let (left, right, top, bottom) = (70.0, 20.0, 30.0, 90.0);
    let (w, h) = (left + right + slot * n, 420.0);
    let high = bars
        .iter()
        .flat_map(|b| [b.alone, b.with_incast])
        .flatten()
        .fold(0.0f64, f64::max);
    let step = round_step(if high > 0.0 { high * 1.1 } else { 1.0 }, 8.0);
    let y_end = (high * 1.1 / step).ceil().max(1.0) * step;
    let y = |v: f64| top + (h - top - bottom) * (1.0 - (v / y_end).clamp(0.0, 1.0));
    let mut s = svg_start(w, h, (left + w - right) / 2.0, title);
    let mut i = 0u32;
    while step * i as f64 <= y_end * (1.0 + 1e-9) {
        let v = step * i as f64;
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{0:.2}" x2="{1}" y2="{0:.2}" stroke="#ddd"/><text x="{2}" y="{3:.2}" text-anchor="end">{4}</text>"##,
            y(v),
            w - right,
            left - 6.0,
            y(v) + 4.0,
            trim(v)
        );
        i += 1;
    }
    let _ = writeln!(
        s,
        r#"<text x="16" y="{0}" transform="rotate(-90 16 {0})" text-anchor="middle">execution time (s)</text>"#,
        (top + h - bottom) / 2.0
    );
    for (k, b) in bars.iter().enumerate() {
        let x0 = left + slot * k as f64;
        let mid = x0 + slot / 2.0;
        let colour = COLOURS[k % COLOURS.len()];
        // The label under the bar, turned to fit.
        let _ = writeln!(
            s,
            r#"<text x="{mid}" y="{0}" transform="rotate(-35 {mid} {0})" text-anchor="end">{1}</text>"#,
            h - bottom + 14.0,
            escape(&b.label)
        );
        let Some(alone) = b.alone else {
            let _ = writeln!(
                s,
                r#"<text x="{mid}" y="{}" text-anchor="middle">no run</text>"#,
                h - bottom - 6.0
            );
            continue;
        };
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{:.2}" width="{}" height="{:.2}" fill="{colour}"/>"#,
            x0 + 18.0,
            y(alone),
            slot - 36.0,
            y(0.0) - y(alone)
        );
        let mut note = format!("{alone:.3}");
        if let Some(with) = b.with_incast {
            let (y0, y1) = (y(alone), y(with));
            let _ = writeln!(
                s,
                r#"<path d="M{mid} {y0:.2} V{y1:.2} M{} {y1:.2} H{}" stroke="black" stroke-width="1.5" fill="none"/>"#,
                mid - 10.0,
                mid + 10.0
            );
            note = format!("+{:.3}", with - alone);
        }
        let at = b.with_incast.map_or(alone, |v| v.max(alone));
        let _ = writeln!(
            s,
            r#"<text x="{mid}" y="{:.2}" text-anchor="middle">{note}</text>"#,
            y(at) - 5.0
        );
    }
    let _ = writeln!(
        s,
        r#"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        w - left - right,
        h - top - bottom
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_stand_on_zero_and_error_bars_reach_the_time_with_the_incast() {
        let bars = [
            ExecutionBar {
                label: "dmodk + 1q".into(),
                alone: Some(0.2),
                with_incast: Some(0.3),
            },
            ExecutionBar {
                label: "arn_afi + 1q".into(),
                alone: Some(0.2),
                with_incast: None,
            },
            ExecutionBar {
                label: "oblivious + 1q".into(),
                alone: None,
                with_incast: Some(0.4),
            },
        ];
        let svg = execution_plot_svg("PTRANS <432>", &bars);
        assert!(svg.contains("PTRANS &lt;432&gt;"));
        // Two bars drawn, the third has no run alone.
        assert_eq!(
            svg.matches(r##"<rect x="##).count(),
            3,
            "two bars and the frame"
        );
        assert!(svg.contains(">no run<"));
        // One error bar, with its overhead written above it; the other bar its time.
        assert_eq!(svg.matches("<path ").count(), 1);
        assert!(svg.contains(">+0.100<"));
        assert!(svg.contains(">0.200<"));
        // 0.4 s is the highest time: the axis reaches past it.
        assert!(svg.contains(">0.45<") || svg.contains(">0.5<"), "{svg}");
    }
}
