//! Run metrics: network efficiency and packet latency per time bin, as CSV and as an SVG plot;
//! the SVG figures that compare runs (efficiency curves, sweeps with their confidence intervals,
//! execution times).
//!
//! Efficiency is the delivered throughput normalised to the fabric's capacity: flits delivered in a
//! bin divided by (end nodes x cycles in the bin), so 1.0 means every node receives a flit every
//! cycle (Rocher-Gonzalez et al., section 4.1).

use std::fmt::Write as _;

mod confidence;
mod execution_svg;
mod sweep_csv;
mod sweep_svg;
pub use confidence::{Estimate, estimate, t975};
pub use execution_svg::{ExecutionBar, execution_plot_svg};
pub use sweep_csv::{
    LOAD_COLUMN, METRICS, Measure, RUNS, RunStatus, SweepRow, SweepTable, csv_field,
    read_sweep_csv, split_fields,
};
pub use sweep_svg::{SweepAxis, SweepPoint, SweepSeries, sweep_curves, sweep_plot_svg};

/// Statistics of one time bin.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bin {
    /// First cycle after the bin.
    pub end: u64,
    /// Cycles in the bin.
    pub cycles: u64,
    /// Efficiency, 0 to 1.
    pub efficiency: f64,
    /// Packets delivered in the bin.
    pub packets: u64,
    /// Mean latency of those packets, in cycles (0 when none).
    pub mean_latency: f64,
}

/// Bins of a run.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Series {
    /// The bins in time order.
    pub bins: Vec<Bin>,
}

impl Series {
    /// Appends a bin from the delivered flits, packets and summed latency in it.
    pub fn push(
        &mut self,
        end: u64,
        cycles: u64,
        nodes: u32,
        flits: u64,
        packets: u64,
        latency_sum: u64,
    ) {
        let cap = (nodes as u64 * cycles).max(1) as f64;
        self.bins.push(Bin {
            end,
            cycles,
            efficiency: flits as f64 / cap,
            packets,
            mean_latency: if packets > 0 {
                latency_sum as f64 / packets as f64
            } else {
                0.0
            },
        });
    }

    /// Mean efficiency over all cycles.
    pub fn mean_efficiency(&self) -> f64 {
        let cycles: u64 = self.bins.iter().map(|b| b.cycles).sum();
        if cycles == 0 {
            return 0.0;
        }
        self.bins
            .iter()
            .map(|b| b.efficiency * b.cycles as f64)
            .sum::<f64>()
            / cycles as f64
    }

    /// `time_us,efficiency`, one row per bin, time at the bin's end.
    pub fn efficiency_csv(&self, cycle_ns: f64) -> String {
        let mut s = String::from("time_us,efficiency\n");
        for b in &self.bins {
            let _ = writeln!(
                s,
                "{:.3},{:.6}",
                b.end as f64 * cycle_ns / 1000.0,
                b.efficiency
            );
        }
        s
    }

    /// `time_us,packets,mean_latency_us`, one row per bin.
    pub fn latency_csv(&self, cycle_ns: f64) -> String {
        let mut s = String::from("time_us,packets,mean_latency_us\n");
        for b in &self.bins {
            let _ = writeln!(
                s,
                "{:.3},{},{:.6}",
                b.end as f64 * cycle_ns / 1000.0,
                b.packets,
                b.mean_latency * cycle_ns / 1000.0
            );
        }
        s
    }

    /// An SVG line plot of efficiency against time, like one panel of the paper's figure 6.
    pub fn efficiency_svg(&self, cycle_ns: f64, title: &str) -> String {
        let curve = Curve {
            label: String::new(),
            points: self
                .bins
                .iter()
                .map(|b| (b.end as f64 * cycle_ns / 1e6, b.efficiency))
                .collect(),
        };
        efficiency_plot_svg(title, &[curve])
    }
}

/// One curve of an efficiency plot: its legend label and (time in ms, efficiency) points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    /// Legend label (no legend is drawn for a single curve).
    pub label: String,
    /// Points in time order.
    pub points: Vec<(f64, f64)>,
}

/// Line colours, one per curve in order (repeated beyond eight).
const COLOURS: [&str; 8] = [
    "#1f5fbf", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

/// An SVG plot of efficiency against time with one line per curve and, for several curves, a
/// legend: one panel of the paper's figure 6.
pub fn efficiency_plot_svg(title: &str, curves: &[Curve]) -> String {
    // With several curves the legend takes a column on the right, outside the plot area.
    let legend = if curves.len() > 1 {
        legend_width(180.0, curves.iter().map(|c| c.label.as_str()))
    } else {
        0.0
    };
    let (w, h, left, right, top, bottom) = (720.0 + legend, 360.0, 60.0, 20.0 + legend, 30.0, 45.0);
    let t_end = curves
        .iter()
        .filter_map(|c| c.points.last().map(|p| p.0))
        .fold(0.0f64, f64::max);
    let t_end = if t_end > 0.0 { t_end } else { 1.0 };
    let x = |ms: f64| left + (w - left - right) * ms / t_end;
    let y = |e: f64| top + (h - top - bottom) * (1.0 - e.clamp(0.0, 1.0));
    let mut s = svg_start(w, h, (left + w - right) / 2.0, title);
    for i in 0..=5 {
        let e = i as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{0}" x2="{1}" y2="{0}" stroke="#ddd"/><text x="{2}" y="{3}" text-anchor="end">{e:.1}</text>"##,
            y(e),
            w - right,
            left - 6.0,
            y(e) + 4.0
        );
    }
    // Time ticks at a round step (1, 2 or 5 times a power of ten), four to ten of them.
    let raw = t_end / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&st| t_end / st <= 10.0)
        .unwrap_or(10.0 * mag);
    let mut i = 0u32;
    while step * i as f64 <= t_end * (1.0 + 1e-9) {
        let ms = step * i as f64;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            x(ms),
            h - bottom + 16.0,
            trim(ms)
        );
        i += 1;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">time (ms)</text><text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">network efficiency</text>"#,
        (left + w - right) / 2.0,
        h - 8.0,
        h / 2.0,
        h / 2.0
    );
    let _ = writeln!(
        s,
        r#"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        w - left - right,
        h - top - bottom
    );
    for (k, c) in curves.iter().enumerate() {
        let mut pts = String::new();
        for &(ms, e) in &c.points {
            let _ = write!(pts, "{:.2},{:.2} ", x(ms), y(e));
        }
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>"##,
            COLOURS[k % COLOURS.len()],
            pts.trim_end()
        );
    }
    if curves.len() > 1 {
        draw_legend(
            &mut s,
            w - legend + 10.0,
            top + 10.0,
            curves.iter().map(|c| c.label.as_str()),
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The width of a legend column: at least `min`, and wide enough for the longest label at some
/// 7 px a character of the 12 px sans-serif text (after its 26 px line and a 10 px margin each
/// side).
fn legend_width<'a>(min: f64, labels: impl Iterator<Item = &'a str>) -> f64 {
    let longest = labels.map(|l| l.chars().count()).max().unwrap_or(0);
    min.max(46.0 + 7.0 * longest as f64)
}

/// A legend from (`x`, `top`) down: per label, a line of its curve's colour and the label.
fn draw_legend<'a>(s: &mut String, x: f64, top: f64, labels: impl Iterator<Item = &'a str>) {
    for (k, label) in labels.enumerate() {
        let y = top + 16.0 * k as f64;
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="3"/><text x="{}" y="{}">{}</text>"##,
            x + 20.0,
            COLOURS[k % COLOURS.len()],
            x + 26.0,
            y + 4.0,
            escape(label)
        );
    }
}

/// The latest bin end `efficiency.csv` may hold, in microseconds: 2^40 cycles (the longest run)
/// of the slowest flit time a scenario takes (4 KB flits at 1 Gb/s: 32.768 us), about 3.6e16.
pub const MAX_TIME_US: f64 = (1u64 << 40) as f64 * 32.768;

/// Reads an `efficiency.csv` written by a run (`time_us,efficiency`) as (time in ms, efficiency)
/// points; `path` names the file in errors, which give its line and field.
pub fn read_efficiency_csv(path: &str, text: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, "time_us,efficiency")) => {}
        _ => {
            return Err(format!(
                "{path}:1: expected the header `time_us,efficiency`"
            ));
        }
    }
    let mut points = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let mut fields = line.split(',');
        let mut field = |name: &str| -> Result<f64, String> {
            let v = fields
                .next()
                .ok_or_else(|| format!("{path}:{}: field `{name}` is missing", i + 1))?;
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("{path}:{}: field `{name}`: `{v}` is not a number", i + 1))
        };
        let t = field("time_us")?;
        let e = field("efficiency")?;
        if fields.next().is_some() {
            return Err(format!("{path}:{}: more than two fields", i + 1));
        }
        if !(0.0..=MAX_TIME_US).contains(&t) {
            return Err(format!(
                "{path}:{}: field `time_us`: {t} is not a time of a run (0 to {MAX_TIME_US:.3e} \
                 us: 2^40 cycles of the slowest flit time)",
                i + 1
            ));
        }
        if !(0.0..=1.0).contains(&e) {
            return Err(format!(
                "{path}:{}: field `efficiency`: {e} is not a share of the capacity, 0 to 1",
                i + 1
            ));
        }
        if points
            .last()
            .is_some_and(|&(p, _): &(f64, f64)| t / 1000.0 <= p)
        {
            return Err(format!(
                "{path}:{}: field `time_us`: {t} is not after the previous row",
                i + 1
            ));
        }
        points.push((t / 1000.0, e));
    }
    if points.is_empty() {
        return Err(format!(
            "{path}: no rows after the header: the run wrote no bin (nothing to plot)"
        ));
    }
    Ok(points)
}

/// The opening of an SVG figure `w` x `h` on white, with `title` centred on `title_x`.
fn svg_start(w: f64, h: f64, title_x: f64, title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{title_x}" y="18" text-anchor="middle">{}</text>"#,
        escape(title)
    );
    s
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Escapes text for XML; control characters, which XML 1.0 cannot hold, become U+FFFD.
pub fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace(
            |c: char| c.is_control() && !matches!(c, '\t' | '\n' | '\r'),
            "\u{fffd}",
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_is_normalised_to_capacity() {
        let mut s = Series::default();
        s.push(100, 100, 4, 400, 10, 500);
        s.push(300, 200, 4, 400, 0, 0);
        assert_eq!(s.bins[0].efficiency, 1.0);
        assert_eq!(s.bins[1].efficiency, 0.5);
        assert!((s.mean_efficiency() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.bins[0].mean_latency, 50.0);
        let csv = s.efficiency_csv(5.12);
        assert!(
            csv.starts_with("time_us,efficiency\n0.512,1.000000\n1.536,0.500000\n"),
            "{csv}"
        );
        let svg = s.efficiency_svg(5.12, "a <test>");
        assert!(svg.contains("<polyline") && svg.contains("a &lt;test&gt;"));
        assert!(
            !svg.contains("stroke-width=\"3\""),
            "no legend for one curve"
        );
    }

    #[test]
    fn the_legend_widens_for_long_labels() {
        let curve = |label: &str| Curve {
            label: label.into(),
            points: vec![(0.0, 0.5), (1.0, 1.0)],
        };
        let width = |svg: &str| -> f64 {
            let w = svg.split("width=\"").nth(1).unwrap();
            w[..w.find('"').unwrap()].parse().unwrap()
        };
        let short = efficiency_plot_svg("t", &[curve("dmodk"), curve("arn")]);
        assert_eq!(width(&short), 900.0, "short labels keep the 180 px column");
        let label = "adaptive_th_afi + flow2sl";
        let long = efficiency_plot_svg("t", &[curve("dmodk"), curve(label)]);
        let legend = width(&long) - 720.0;
        assert!(
            legend > 180.0 && legend >= 46.0 + 7.0 * label.len() as f64,
            "{legend}"
        );
    }

    #[test]
    fn a_panel_overlays_runs_read_back_from_their_csv() {
        let mut s = Series::default();
        s.push(100, 100, 4, 400, 10, 500);
        s.push(300, 200, 4, 200, 0, 0);
        let csv = s.efficiency_csv(5.12);
        let pts = read_efficiency_csv("a.csv", &csv).unwrap();
        assert_eq!(pts, vec![(0.000512, 1.0), (0.001536, 0.25)]);
        let curves = [
            Curve {
                label: "dmodk".into(),
                points: pts.clone(),
            },
            Curve {
                label: "arn_afi".into(),
                points: pts,
            },
        ];
        let svg = efficiency_plot_svg("panel", &curves);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">dmodk</text>") && svg.contains(">arn_afi</text>"));
    }

    #[test]
    fn a_broken_csv_names_file_line_and_field() {
        let e = read_efficiency_csv("r/efficiency.csv", "time,eff\n").unwrap_err();
        assert!(e.starts_with("r/efficiency.csv:1:"), "{e}");
        let e = read_efficiency_csv("f.csv", "time_us,efficiency\n1,0.5\n2,x\n").unwrap_err();
        assert_eq!(e, "f.csv:3: field `efficiency`: `x` is not a number");
        let e = read_efficiency_csv("f.csv", "time_us,efficiency\n1\n").unwrap_err();
        assert_eq!(e, "f.csv:2: field `efficiency` is missing");
        let e = read_efficiency_csv("f.csv", "time_us,efficiency\n2,0.5\n1,0.5\n").unwrap_err();
        assert!(e.starts_with("f.csv:3: field `time_us`"), "{e}");
    }
}
