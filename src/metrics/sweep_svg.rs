//! The plot of load sweeps: two panels side by side, accepted load against offered load and mean
//! packet latency against offered load, one point per run and one curve per sweep (as seeds 002
//! and 003 plot their results, several routings in one figure). A run that stopped early (a
//! deadlock or another broken invariant) is drawn as a cross and named in a note under the panels.

use super::{COLOURS, draw_legend, escape, legend_width, svg_start, trim};
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

/// The runs of one sweep and the name its curve has in the legend.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSeries {
    /// Legend label (no legend is drawn for a single sweep).
    pub label: String,
    /// One point per run, in offered-load order.
    pub points: Vec<SweepPoint>,
}

/// How a run of a sweep ended (the `status` column of `sweep.csv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Every cycle simulated, every invariant held.
    Complete,
    /// The progress watchdog stopped it.
    Deadlock,
    /// Another invariant broke.
    Invariant,
    /// Stopped before its last cycle (a signal, a time limit).
    Stopped,
}

impl RunStatus {
    /// Every status, in the order the column's values are listed.
    pub const ALL: [RunStatus; 4] = [
        RunStatus::Complete,
        RunStatus::Deadlock,
        RunStatus::Invariant,
        RunStatus::Stopped,
    ];

    /// Its name in `sweep.csv`.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Deadlock => "deadlock",
            RunStatus::Invariant => "invariant",
            RunStatus::Stopped => "stopped",
        }
    }

    /// The status of that name, if any.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Reads a `sweep.csv` written by `arnsim sweep` (its first seven columns: offered and accepted
/// load, bytes per ns per switch, mean and largest latency, packets, status); `path` names the
/// file in errors, which give its line and field.
pub fn read_sweep_csv(path: &str, text: &str) -> Result<Vec<SweepPoint>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.starts_with("offered_load,accepted_load,") => {}
        _ => return Err(format!("{path}:1: expected the header of a sweep.csv")),
    }
    let mut points = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line.splitn(8, ',').collect();
        let n = i + 1;
        let num = |k: usize, name: &str| -> Result<f64, String> {
            let v = f
                .get(k)
                .ok_or_else(|| format!("{path}:{n}: field `{name}` is missing"))?;
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    format!("{path}:{n}: field `{name}`: `{v}` is not a number 0 or above")
                })
        };
        let (offered, accepted) = (num(0, "offered_load")?, num(1, "accepted_load")?);
        if offered > 1.0 || accepted > 1.0 {
            return Err(format!(
                "{path}:{n}: loads are fractions of the links' capacity, 0 to 1"
            ));
        }
        let mean_latency_ns = match f.get(3) {
            Some(&"") => None,
            _ => Some(num(3, "mean_latency_ns")?),
        };
        let status = f
            .get(6)
            .ok_or_else(|| format!("{path}:{n}: field `status` is missing"))?;
        if let Some(reason) = f.get(7) {
            csv_text_field(reason).map_err(|e| format!("{path}:{n}: field `reason`: {e}"))?;
        }
        if let Some(last) = points.last().map(|p: &SweepPoint| p.offered)
            && offered <= last
        {
            return Err(format!(
                "{path}:{n}: field `offered_load`: {offered} {} the row before's {last}; a sweep \
                 runs each load once, in increasing order",
                if offered == last {
                    "repeats"
                } else {
                    "is below"
                }
            ));
        }
        let status = RunStatus::named(status).ok_or_else(|| {
            let names: Vec<&str> = RunStatus::ALL.iter().map(|s| s.name()).collect();
            format!(
                "{path}:{n}: field `status`: `{status}` is not one of {}",
                names.join(", ")
            )
        })?;
        points.push(SweepPoint {
            offered,
            accepted,
            mean_latency_ns,
            complete: status == RunStatus::Complete,
        });
    }
    if points.is_empty() {
        return Err(format!(
            "{path}: no rows after the header: the sweep ran no load (nothing to plot)"
        ));
    }
    Ok(points)
}

/// A CSV text field as `arnsim sweep` writes one: plain text without a comma or quote, or
/// quoted whole with its quotes doubled.
fn csv_text_field(f: &str) -> Result<(), String> {
    let Some(inner) = f.strip_prefix('"') else {
        return match f.contains(['"', ',']) {
            true => Err(format!(
                "`{f}`: a comma or quote in a field that is not quoted"
            )),
            false => Ok(()),
        };
    };
    let broken = || format!("`{f}`: a quoted field that is not closed, or has a lone quote");
    let inner = inner.strip_suffix('"').ok_or_else(broken)?;
    if inner.replace("\"\"", "").contains('"') {
        return Err(broken());
    }
    Ok(())
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

/// One panel: its frame at (`x0`, `top`), size `pw` x `ph`, offered load 0 to 1 across and
/// 0 to `y_end` up, ticks every `y_step`, per sweep the points `(offered, value, complete)`.
struct Panel<'a> {
    x0: f64,
    y_label: &'a str,
    y_end: f64,
    y_step: f64,
    curves: Vec<Vec<(f64, f64, bool)>>,
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
        for (k, points) in self.curves.iter().enumerate() {
            self.draw_curve(s, points, COLOURS[k % COLOURS.len()]);
        }
    }

    fn draw_curve(&self, s: &mut String, points: &[(f64, f64, bool)], colour: &str) {
        let mut pts = String::new();
        for &(load, v, _) in points {
            let _ = write!(pts, "{:.2},{:.2} ", self.x(load), self.y(v));
        }
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{}"/>"##,
            pts.trim_end()
        );
        for &(load, v, complete) in points {
            let (px, py) = (self.x(load), self.y(v));
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

/// The SVG of one or more sweeps: accepted load against offered load (with the line where they
/// are equal) on the left, mean latency in ns against offered load on the right; a legend names
/// the sweeps when there are several.
pub fn sweep_plot_svg(title: &str, sweeps: &[SweepSeries]) -> String {
    let legend = if sweeps.len() > 1 {
        legend_width(160.0, sweeps.iter().map(|c| c.label.as_str()))
    } else {
        0.0
    };
    let (w, h) = (2.0 * PW + 200.0 + legend, TOP + PH + 70.0);
    let accepted = Panel {
        x0: 70.0,
        y_label: "accepted load (fraction of capacity)",
        y_end: 1.0,
        y_step: 0.2,
        curves: sweeps
            .iter()
            .map(|c| {
                c.points
                    .iter()
                    .map(|p| (p.offered, p.accepted, p.complete))
                    .collect()
            })
            .collect(),
        diagonal: true,
    };
    let latency: Vec<Vec<(f64, f64, bool)>> = sweeps
        .iter()
        .map(|c| {
            c.points
                .iter()
                .filter_map(|p| p.mean_latency_ns.map(|l| (p.offered, l, p.complete)))
                .collect()
        })
        .collect();
    let most = latency.iter().flatten().map(|p| p.1).fold(0.0f64, f64::max);
    let most = if most > 0.0 { most } else { 1.0 };
    let step = round_step(most, 6.0);
    let latency = Panel {
        x0: 70.0 + PW + 110.0,
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
            r##"<text x="70" y="{}">× a run that stopped early (deadlock or broken invariant): see sweep.csv</text>"##,
            h - 6.0,
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
        let one = |pts: &[SweepPoint]| {
            [SweepSeries {
                label: "x".into(),
                points: pts.to_vec(),
            }]
        };
        let svg = sweep_plot_svg("a <sweep>", &one(&pts));
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
        let svg = sweep_plot_svg("s", &one(&pts));
        assert!(svg.contains("stopped early"));
        assert_eq!(
            svg.matches("<path").count(),
            1,
            "no latency point without packets"
        );
        assert_eq!(svg.matches("<circle").count(), 2);
    }

    #[test]
    fn several_sweeps_share_the_panels_with_a_legend() {
        let a = SweepSeries {
            label: "MIN-1VL".into(),
            points: vec![
                point(0.5, 0.5, Some(700.0), true),
                point(0.9, 0.4, Some(9000.0), false),
            ],
        };
        let b = SweepSeries {
            label: "D3R-2VL".into(),
            points: vec![point(0.5, 0.5, Some(650.0), true)],
        };
        let svg = sweep_plot_svg("t", &[a.clone(), b]);
        assert_eq!(svg.matches("<polyline").count(), 4, "two curves per panel");
        assert!(svg.contains(">MIN-1VL</text>") && svg.contains(">D3R-2VL</text>"));
        assert!(svg.contains("stopped early"));
        assert!(
            !sweep_plot_svg("t", &[a]).contains(">MIN-1VL</text>"),
            "no legend for one"
        );
    }

    #[test]
    fn a_sweep_csv_reads_back_and_names_its_broken_field() {
        let text = "offered_load,accepted_load,accepted_bytes_per_ns_per_switch,mean_latency_ns,max_latency_ns,packets_delivered,status,reason\n\
                    0.50,0.499000,1.0,700.5,900.0,10,complete,\n\
                    0.90,0.400000,1.0,,,0,stopped,\"deadlock, at cycle 5\"\n";
        let p = read_sweep_csv("s.csv", text).unwrap();
        assert_eq!(
            p,
            vec![
                point(0.5, 0.499, Some(700.5), true),
                point(0.9, 0.4, None, false)
            ]
        );
        let e = read_sweep_csv("s.csv", &text.replace("0.400000", "x")).unwrap_err();
        assert_eq!(
            e,
            "s.csv:3: field `accepted_load`: `x` is not a number 0 or above"
        );
        assert!(read_sweep_csv("s.csv", "time_us,efficiency\n").is_err());
    }

    #[test]
    fn round_steps() {
        assert_eq!(round_step(1500.0, 6.0), 500.0);
        assert!((round_step(1.0, 6.0) - 0.2).abs() < 1e-12);
        assert_eq!(round_step(12_000.0, 6.0), 2000.0);
    }
}
