//! Run metrics: network efficiency and packet latency per time bin, as CSV and as an SVG plot.
//!
//! Efficiency is the delivered throughput normalised to the fabric's capacity: flits delivered in a
//! bin divided by (end nodes x cycles in the bin), so 1.0 means every node receives a flit every
//! cycle (seed 000, section 4.1).

use std::fmt::Write as _;

/// Statistics of one time bin.
#[derive(Clone, Copy, Debug, PartialEq)]
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
#[derive(Clone, Debug, Default)]
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
        let (w, h, left, right, top, bottom) = (720.0, 360.0, 60.0, 20.0, 30.0, 45.0);
        let t_end = self
            .bins
            .last()
            .map_or(1.0, |b| b.end as f64 * cycle_ns / 1e6)
            .max(1e-9);
        let x = |ms: f64| left + (w - left - right) * ms / t_end;
        let y = |e: f64| top + (h - top - bottom) * (1.0 - e.clamp(0.0, 1.0));
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
        for i in 0..=6 {
            let ms = t_end * i as f64 / 6.0;
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                x(ms),
                h - bottom + 16.0,
                trim(ms)
            );
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
        let mut pts = String::new();
        for b in &self.bins {
            let _ = write!(
                pts,
                "{:.2},{:.2} ",
                x(b.end as f64 * cycle_ns / 1e6),
                y(b.efficiency)
            );
        }
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="#1f5fbf" stroke-width="1.5" points="{}"/>"##,
            pts.trim_end()
        );
        s.push_str("</svg>\n");
        s
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Escapes text for XML.
pub fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
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
    }
}
