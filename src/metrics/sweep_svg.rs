//! The plot of a load sweep: two panels side by side, accepted load against offered load and mean
//! packet latency against offered load, one point per run (as seeds 002 and 003 plot their
//! results). A run that stopped early (a deadlock or another broken invariant) is drawn as a red
//! cross and named in a note under the panels.

use super::{COLOURS, escape, trim};
use std::fmt::Write as _;

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// Offered load, 0 to 1.
    pub offered: f64,
    /// Accepted load (delivered flits over the nodes' injection capacity), 0 to 1.
    pub accepted: f64,
    /// Mean packet latency in ns; `None` when no packet was delivered.
    pub mean_latency_ns: Option<f64>,
    /// Whether the run simulated every cycle without a broken invariant.
    pub complete: bool,
}

/// A round step (1, 2 or 5 times a power of ten) that cuts `0..end` into at most `most` parts.
fn round_step(end: f64, most: f64) -> f64 {
    let mag = 10f64.powf((end / most).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&st| end / st <= most)
        .unwrap_or(10.0 * mag)
}

/// One panel: its frame at (`x0`, `top`), size `pw` x `ph`, offered load 0 to 1 across and
/// 0 to `y_end` up, ticks every `y_step`, the points `(offered, value, complete)`.
struct Panel<'a> {
    x0: f64,
    y_label: &'a str,
    y_end: f64,
    y_step: f64,
    points: Vec<(f64, f64, bool)>,
    diagonal: bool,
}

const TOP: f64 = 30.0;
const PW: f64 = 330.0;
const PH: f64 = 280.0;

impl Panel<'_> {
    fn x(&self, load: f64) -> f64 {
        self.x0 + PW * load.clamp(0.0, 1.0)
    }

    fn y(&self, v: f64) -> f64 {
        TOP + PH * (1.0 - (v / self.y_end).clamp(0.0, 1.0))
    }

    fn draw(&self, s: &mut String) {
        let (x0, x1, bottom) = (self.x0, self.x0 + PW, TOP + PH);
        let mut i = 0u32;
        while self.y_step * i as f64 <= self.y_end * (1.0 + 1e-9) {
            let v = self.y_step * i as f64;
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{0:.2}" x2="{x1}" y2="{0:.2}" stroke="#ddd"/><text x="{1}" y="{2:.2}" text-anchor="end">{3}</text>"##,
                self.y(v),
                x0 - 6.0,
                self.y(v) + 4.0,
                trim(v)
            );
            i += 1;
        }
        for k in 0..=5 {
            let load = k as f64 / 5.0;
            let _ = writeln!(
                s,
                r#"<text x="{:.2}" y="{}" text-anchor="middle">{load:.1}</text>"#,
                self.x(load),
                bottom + 16.0
            );
        }
        let (mid_x, mid_y) = (x0 + PW / 2.0, TOP + PH / 2.0);
        let _ = writeln!(
            s,
            r#"<text x="{mid_x}" y="{}" text-anchor="middle">offered load</text><text x="{}" y="{mid_y}" transform="rotate(-90 {} {mid_y})" text-anchor="middle">{}</text>"#,
            bottom + 34.0,
            x0 - 52.0,
            x0 - 52.0,
            escape(self.y_label)
        );
        let _ = writeln!(
            s,
            r#"<rect x="{x0}" y="{TOP}" width="{PW}" height="{PH}" fill="none" stroke="black"/>"#
        );
        if self.diagonal {
            // Accepted equals offered: what a fabric below saturation delivers.
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{bottom}" x2="{:.2}" y2="{:.2}" stroke="#999" stroke-dasharray="4 4"/>"##,
                self.x(1.0),
                self.y(1.0)
            );
        }
        let mut pts = String::new();
        for &(load, v, _) in &self.points {
            let _ = write!(pts, "{:.2},{:.2} ", self.x(load), self.y(v));
        }
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>"##,
            COLOURS[0],
            pts.trim_end()
        );
        for &(load, v, complete) in &self.points {
            let (px, py) = (self.x(load), self.y(v));
            if complete {
                let _ = writeln!(
                    s,
                    r##"<circle cx="{px:.2}" cy="{py:.2}" r="3" fill="{}"/>"##,
                    COLOURS[0]
                );
            } else {
                let _ = writeln!(
                    s,
                    r##"<path d="M{:.2},{:.2}L{:.2},{:.2}M{:.2},{:.2}L{:.2},{:.2}" stroke="{}" stroke-width="2"/>"##,
                    px - 5.0,
                    py - 5.0,
                    px + 5.0,
                    py + 5.0,
                    px - 5.0,
                    py + 5.0,
                    px + 5.0,
                    py - 5.0,
                    COLOURS[1]
                );
            }
        }
    }
}

/// The SVG of a sweep: accepted load against offered load (with the line where they are equal)
/// on the left, mean latency in ns against offered load on the right.
pub fn sweep_plot_svg(title: &str, points: &[SweepPoint]) -> String {
    let (w, h) = (2.0 * PW + 200.0, TOP + PH + 70.0);
    let accepted = Panel {
        x0: 70.0,
        y_label: "accepted load (fraction of capacity)",
        y_end: 1.0,
        y_step: 0.2,
        points: points
            .iter()
            .map(|p| (p.offered, p.accepted, p.complete))
            .collect(),
        diagonal: true,
    };
    let latency: Vec<(f64, f64, bool)> = points
        .iter()
        .filter_map(|p| p.mean_latency_ns.map(|l| (p.offered, l, p.complete)))
        .collect();
    let most = latency.iter().map(|p| p.1).fold(0.0f64, f64::max);
    let most = if most > 0.0 { most } else { 1.0 };
    let step = round_step(most, 6.0);
    let latency = Panel {
        x0: 70.0 + PW + 110.0,
        y_label: "mean latency (ns)",
        y_end: (most / step).ceil() * step,
        y_step: step,
        points: latency,
        diagonal: false,
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle">{}</text>"#,
        w / 2.0,
        escape(title)
    );
    accepted.draw(&mut s);
    latency.draw(&mut s);
    if points.iter().any(|p| !p.complete) {
        let _ = writeln!(
            s,
            r##"<text x="70" y="{}" fill="{}">× a run that stopped early (deadlock or broken invariant): see sweep.csv</text>"##,
            h - 6.0,
            COLOURS[1]
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(offered: f64, accepted: f64, latency: Option<f64>, complete: bool) -> SweepPoint {
        SweepPoint {
            offered,
            accepted,
            mean_latency_ns: latency,
            complete,
        }
    }

    #[test]
    fn two_panels_and_stopped_runs_marked() {
        let pts = [
            point(0.2, 0.19, Some(800.0), true),
            point(0.5, 0.48, Some(1500.0), true),
        ];
        let svg = sweep_plot_svg("a <sweep>", &pts);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(
            svg.matches("<circle").count(),
            4,
            "a point per run per panel"
        );
        assert!(svg.contains("a &lt;sweep&gt;") && svg.contains(">mean latency (ns)</text>"));
        assert!(!svg.contains("stopped early"));
        // Latency ticks at a round step up to a round end above the largest latency.
        assert!(
            svg.contains(">1500</text>") && svg.contains(">500</text>"),
            "{svg}"
        );
        let pts = [
            point(0.2, 0.19, Some(800.0), true),
            point(0.9, 0.3, None, false),
        ];
        let svg = sweep_plot_svg("s", &pts);
        assert!(svg.contains("stopped early"));
        assert_eq!(
            svg.matches("<path").count(),
            1,
            "no latency point without packets"
        );
        assert_eq!(svg.matches("<circle").count(), 2);
    }

    #[test]
    fn round_steps() {
        assert_eq!(round_step(1500.0, 6.0), 500.0);
        assert!((round_step(1.0, 6.0) - 0.2).abs() < 1e-12);
        assert_eq!(round_step(12_000.0, 6.0), 2000.0);
    }
}
