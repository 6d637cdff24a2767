//! The plot of sweeps: two panels side by side, accepted load and mean packet latency against
//! the first varied key (offered load, for a load sweep), one curve per value of the others and
//! per sweep (as seeds 002 and 003 plot their results, several routings in one figure), each
//! point with its 95 % confidence interval when it was replicated. A point whose runs stopped
//! early (a deadlock or another broken invariant) is drawn as a cross and named in a note under
//! the panels.

use super::sweep_csv::{LOAD_COLUMN, RunStatus, SweepTable};
use super::{COLOURS, draw_legend, escape, legend_width, svg_start, trim};
use std::fmt::Write as _;

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// Where it sits across: the first varied key's value, or its place among them when the
    /// values are not numbers.
    pub x: f64,
    /// Accepted load (delivered flits over the nodes' injection capacity), 0 to 1.
    pub accepted: f64,
    /// Half-width of the accepted load's 95 % confidence interval.
    pub accepted_ci: Option<f64>,
    /// Mean packet latency in ns; `None` when no packet was delivered.
    pub mean_latency_ns: Option<f64>,
    /// Half-width of the latency's 95 % confidence interval.
    pub latency_ci: Option<f64>,
    /// Whether its runs simulated every cycle without a broken invariant.
    pub complete: bool,
}

/// The points of one curve and the name it has in the legend.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSeries {
    /// Legend label (no legend is drawn for a single curve).
    pub label: String,
    /// Its points, in the order of the first key's values.
    pub points: Vec<SweepPoint>,
}

/// The axis across both panels.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepAxis {
    /// Its name under the panels.
    pub label: String,
    /// The values at its left and right ends.
    pub lo: f64,
    pub hi: f64,
    /// Its ticks: value and text.
    pub ticks: Vec<(f64, String)>,
    /// Whether the accepted-load panel draws the line accepted = offered (a load sweep).
    pub diagonal: bool,
}

impl SweepAxis {
    /// Offered load, 0 to 1, ticks every 0.2.
    pub fn load() -> Self {
        SweepAxis {
            label: "offered load".into(),
            lo: 0.0,
            hi: 1.0,
            ticks: (0..=5)
                .map(|k| (k as f64 / 5.0, format!("{:.1}", k as f64 / 5.0)))
                .collect(),
            diagonal: true,
        }
    }

    /// A key whose values are numbers: from a round value at or below the least to one at or
    /// above the largest, ticks at a round step.
    pub fn numbers(label: &str, values: &[f64]) -> Self {
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = match (lo.is_finite() && hi.is_finite(), lo == hi) {
            (false, _) => (0.0, 1.0),
            (true, true) => (lo - lo.abs().max(1.0) / 2.0, hi + hi.abs().max(1.0) / 2.0),
            (true, false) => (lo, hi),
        };
        let step = round_step(hi - lo, 5.0);
        let (lo, hi) = ((lo / step).floor() * step, (hi / step).ceil() * step);
        let mut ticks = Vec::new();
        let mut k = 0u32;
        while lo + step * k as f64 <= hi * (1.0 + 1e-9) + 1e-12 && k <= 20 {
            let v = lo + step * k as f64;
            ticks.push((v, trim(v)));
            k += 1;
        }
        SweepAxis {
            label: label.into(),
            lo,
            hi,
            ticks,
            diagonal: false,
        }
    }

    /// A key whose values are names: one slot each, in order.
    pub fn categories(label: &str, names: &[String]) -> Self {
        SweepAxis {
            label: label.into(),
            lo: -0.5,
            hi: names.len() as f64 - 0.5,
            ticks: names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, n.clone()))
                .collect(),
            diagonal: false,
        }
    }
}

/// The axis and curves of one or more sweeps read back, each table with the label of its
/// sweep: across, their first varied key (the same in every table); a curve per sweep and per
/// combination of the other keys' values, labelled by them. Points the sweep did not finish are
/// left out.
pub fn sweep_curves(
    tables: &[(String, SweepTable)],
) -> Result<(SweepAxis, Vec<SweepSeries>), String> {
    let Some((first_label, first)) = tables.first() else {
        return Err("no sweep to plot".into());
    };
    let key = first.keys[0].clone();
    if let Some((l, t)) = tables.iter().find(|(_, t)| t.keys[0] != key) {
        return Err(format!(
            "{l} varies `{}` first and {first_label} `{key}`: sweeps plotted together share the \
             key across",
            t.keys[0]
        ));
    }
    let rows = || tables.iter().flat_map(|(_, t)| &t.rows);
    let numbers: Option<Vec<f64>> = rows().map(|r| r.values[0].parse::<f64>().ok()).collect();
    let mut names: Vec<String> = Vec::new();
    for r in rows() {
        if !names.contains(&r.values[0]) {
            names.push(r.values[0].clone());
        }
    }
    let axis = match &numbers {
        _ if key == LOAD_COLUMN => SweepAxis::load(),
        Some(v) => SweepAxis::numbers(&key, v),
        None => SweepAxis::categories(&key, &names),
    };
    let x_of = |text: &str| match numbers {
        Some(_) => text.parse::<f64>().unwrap_or(0.0),
        None => names.iter().position(|n| n == text).unwrap_or(0) as f64,
    };
    let mut series = Vec::new();
    for (label, t) in tables {
        let mut curves: Vec<(&[String], Vec<SweepPoint>)> = Vec::new();
        for r in &t.rows {
            let Some(a) = r.accepted else { continue };
            let p = SweepPoint {
                x: x_of(&r.values[0]),
                accepted: a.mean,
                accepted_ci: a.ci95,
                mean_latency_ns: r.mean_latency_ns.map(|m| m.mean),
                latency_ci: r.mean_latency_ns.and_then(|m| m.ci95),
                complete: r.status == RunStatus::Complete,
            };
            match curves.iter_mut().find(|(k, _)| *k == &r.values[1..]) {
                Some((_, pts)) => pts.push(p),
                None => curves.push((&r.values[1..], vec![p])),
            }
        }
        for (others, points) in curves {
            let named: Vec<String> = t.keys[1..]
                .iter()
                .zip(others)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let label = match (tables.len() > 1, named.is_empty()) {
                (true, true) => label.clone(),
                (true, false) => format!("{label}: {}", named.join(", ")),
                (false, _) => named.join(", "),
            };
            series.push(SweepSeries { label, points });
        }
    }
    Ok((axis, series))
}

/// A round step (1, 2 or 5 times a power of ten) that cuts `0..end` into at most `most` parts.
pub(super) fn round_step(end: f64, most: f64) -> f64 {
    let mag = 10f64.powf((end / most).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&st| end / st <= most)
        .unwrap_or(10.0 * mag)
}

/// A point of a panel: across, up, the half-width of its interval, and whether it completed.
type Dot = (f64, f64, Option<f64>, bool);

/// One panel: its frame at (`x0`, `top`), size `pw` x `ph`, `axis` across and 0 to `y_end` up,
/// ticks every `y_step`, the points of each curve.
struct Panel<'a> {
    x0: f64,
    axis: &'a SweepAxis,
    y_label: &'a str,
    y_end: f64,
    y_step: f64,
    curves: Vec<Vec<Dot>>,
    diagonal: bool,
}

const TOP: f64 = 30.0;
const PW: f64 = 330.0;
const PH: f64 = 280.0;

impl Panel<'_> {
    fn x(&self, v: f64) -> f64 {
        let span = (self.axis.hi - self.axis.lo).max(f64::MIN_POSITIVE);
        self.x0 + PW * ((v - self.axis.lo) / span).clamp(0.0, 1.0)
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
        for (v, text) in &self.axis.ticks {
            let _ = writeln!(
                s,
                r#"<text x="{:.2}" y="{}" text-anchor="middle">{}</text>"#,
                self.x(*v),
                bottom + 16.0,
                escape(text)
            );
        }
        let (mid_x, mid_y) = (x0 + PW / 2.0, TOP + PH / 2.0);
        let _ = writeln!(
            s,
            r#"<text x="{mid_x}" y="{}" text-anchor="middle">{}</text><text x="{}" y="{mid_y}" transform="rotate(-90 {} {mid_y})" text-anchor="middle">{}</text>"#,
            bottom + 34.0,
            escape(&self.axis.label),
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
                r##"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="#999" stroke-dasharray="4 4"/>"##,
                self.x(0.0),
                self.y(0.0),
                self.x(1.0),
                self.y(1.0)
            );
        }
        for (k, points) in self.curves.iter().enumerate() {
            self.draw_curve(s, points, COLOURS[k % COLOURS.len()]);
        }
    }

    fn draw_curve(&self, s: &mut String, points: &[Dot], colour: &str) {
        let mut pts = String::new();
        for &(x, v, _, _) in points {
            let _ = write!(pts, "{:.2},{:.2} ", self.x(x), self.y(v));
        }
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{}"/>"##,
            pts.trim_end()
        );
        for &(x, v, ci, complete) in points {
            let (px, py) = (self.x(x), self.y(v));
            if let Some(ci) = ci.filter(|c| *c > 0.0) {
                // The 95 % interval: a bar with caps.
                let (top, bottom) = (self.y(v + ci), self.y(v - ci));
                let _ = writeln!(
                    s,
                    r##"<path d="M{px:.2},{top:.2}L{px:.2},{bottom:.2}M{:.2},{top:.2}L{:.2},{top:.2}M{:.2},{bottom:.2}L{:.2},{bottom:.2}" stroke="{colour}" class="ci"/>"##,
                    px - 3.0,
                    px + 3.0,
                    px - 3.0,
                    px + 3.0,
                );
            }
            if complete {
                let _ = writeln!(
                    s,
                    r##"<circle cx="{px:.2}" cy="{py:.2}" r="3" fill="{colour}"/>"##
                );
            } else {
                let _ = writeln!(
                    s,
                    r##"<path d="M{:.2},{:.2}L{:.2},{:.2}M{:.2},{:.2}L{:.2},{:.2}" stroke="{colour}" stroke-width="2"/>"##,
                    px - 5.0,
                    py - 5.0,
                    px + 5.0,
                    py + 5.0,
                    px - 5.0,
                    py + 5.0,
                    px + 5.0,
                    py - 5.0,
                );
            }
        }
    }
}

/// The SVG of one or more curves: accepted load against `axis` (with the line accepted =
/// offered on a load axis) on the left, mean latency in ns on the right, each point with its
/// interval; a legend names the curves when there are several.
pub fn sweep_plot_svg(title: &str, axis: &SweepAxis, sweeps: &[SweepSeries]) -> String {
    let legend = if sweeps.len() > 1 {
        legend_width(160.0, sweeps.iter().map(|c| c.label.as_str()))
    } else {
        0.0
    };
    let (w, h) = (2.0 * PW + 200.0 + legend, TOP + PH + 70.0);
    let accepted = Panel {
        x0: 70.0,
        axis,
        y_label: "accepted load (fraction of capacity)",
        y_end: 1.0,
        y_step: 0.2,
        curves: sweeps
            .iter()
            .map(|c| {
                c.points
                    .iter()
                    .map(|p| (p.x, p.accepted, p.accepted_ci, p.complete))
                    .collect()
            })
            .collect(),
        diagonal: axis.diagonal,
    };
    let latency: Vec<Vec<Dot>> = sweeps
        .iter()
        .map(|c| {
            c.points
                .iter()
                .filter_map(|p| {
                    p.mean_latency_ns
                        .map(|l| (p.x, l, p.latency_ci, p.complete))
                })
                .collect()
        })
        .collect();
    let most = latency
        .iter()
        .flatten()
        .map(|p| p.1 + p.2.unwrap_or(0.0))
        .fold(0.0f64, f64::max);
    let most = if most > 0.0 { most } else { 1.0 };
    let step = round_step(most, 6.0);
    let latency = Panel {
        x0: 70.0 + PW + 110.0,
        axis,
        y_label: "mean latency (ns)",
        y_end: (most / step).ceil() * step,
        y_step: step,
        curves: latency,
        diagonal: false,
    };
    let mut s = svg_start(w, h, (w - legend) / 2.0, title);
    accepted.draw(&mut s);
    latency.draw(&mut s);
    if sweeps.len() > 1 {
        let labels = sweeps.iter().map(|c| c.label.as_str());
        draw_legend(&mut s, w - legend + 10.0, TOP + 10.0, labels);
    }
    if sweeps.iter().flat_map(|c| &c.points).any(|p| !p.complete) {
        let _ = writeln!(
            s,
            r##"<text x="70" y="{}">× a point whose runs stopped early (deadlock or broken invariant): see sweep.csv</text>"##,
            h - 6.0,
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests;
