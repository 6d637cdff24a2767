//! Cross-check cases of the congestion points (IEEE 802.1Qau).

use super::{first_difference, scaled};
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::congestion_point::{
    Arrival, CongestionPoint, CongestionPointIn, CongestionPointOut,
};
use arnsim::blocks::congestion_point::{QcnPoint, QcnRegs};
use arnsim::stimulus::congestion_point::RandomArrivals;
use arnsim::trace::Visit;

fn config(ports: usize) -> HdlConfig {
    HdlConfig {
        block: "congestion_point",
        params: vec![("P", ports as u64)],
        alter: None,
    }
}

/// A cycle with the settings `cp`, arrivals (input, output, length) and every queue at `q`.
fn cy(cp: QcnPoint, arrivals: &[(usize, u8, u16)], q: u32) -> CongestionPointIn {
    let mut inp = CongestionPointIn {
        cp,
        ..Default::default()
    };
    for &(i, out, len) in arrivals {
        inp.arrivals[i] = Some(Arrival { out, len });
    }
    inp.queue.fill(q);
    inp
}

/// Directed sequences: the feedback's sign and quantisation on a queue rising, falling and
/// steady (every packet sampled); every input at one output in one cycle; the points turned off
/// and on again.
fn directed(ports: usize) -> Vec<(&'static str, Vec<CongestionPointIn>)> {
    let cp = QcnPoint {
        qeq: 100,
        w: 2,
        sample: 1,
    };
    let sign: Vec<_> = [50, 40, 300, 100, 100, 101]
        .iter()
        .map(|&q| cy(cp, &[(0, 0, 1)], q))
        .collect();
    let all: Vec<(usize, u8, u16)> = (0..ports).map(|i| (i, 0, 4)).collect();
    let cp8 = QcnPoint { sample: 8, ..cp };
    let burst = vec![cy(cp8, &all, 400), cy(cp8, &all, 420), cy(cp8, &all, 0)];
    let off = QcnPoint { qeq: 0, ..cp8 };
    let toggle = vec![
        cy(cp8, &[(0, 0, 3)], 500),
        cy(off, &[(0, 0, 9)], 500),
        cy(cp8, &[(0, 0, 5)], 600),
        cy(cp8, &[(0, 0, 5)], 700),
    ];
    vec![
        ("directed sign and quantisation", sign),
        ("directed every input at one output", burst),
        ("directed off and on", toggle),
    ]
}

/// Congestion points with a planted bug: Qold never takes the sampled queue.
#[derive(Clone)]
struct QoldStuck {
    inner: CongestionPoint,
    ports: usize,
}

impl Block for QoldStuck {
    type In = CongestionPointIn;
    type Out = CongestionPointOut;
    const NAME: &'static str = "congestion_point";

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn evaluate(&mut self, inp: &CongestionPointIn) -> CongestionPointOut {
        self.inner.evaluate(inp)
    }

    fn commit(&mut self) {
        let before: Vec<QcnRegs> = (0..self.ports).map(|o| self.inner.regs(o)).collect();
        self.inner.commit();
        for (o, b) in before.iter().enumerate() {
            let left = self.inner.regs(o).left;
            self.inner.set_regs(o, QcnRegs { left, qold: b.qold });
        }
    }

    fn probe_inputs(&self, inp: &CongestionPointIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &CongestionPointOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

/// Every cross-check case of the congestion points: three switch sizes with their directed
/// cases and seeded random runs, one altered Rust block and three altered RTL ones.
pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    let plan: [(usize, u64, u64); 3] = [(4, 2, 250_000), (8, 2, 200_000), (1, 1, 100_000)];
    for (ports, seeds, cycles) in plan {
        for (name, seq) in directed(ports) {
            let len = seq.len() as u64;
            v.push(Case::new(
                config(ports),
                name,
                false,
                len,
                move || CongestionPoint::new(ports),
                move || seq.clone().into_iter(),
            ));
        }
        for k in 0..seeds {
            let seed = 0xC0_0000 + ((ports as u64) << 8) + k;
            v.push(Case::new(
                config(ports),
                format!("random seed {seed:#x}"),
                true,
                scaled(cycles, scale),
                move || CongestionPoint::new(ports),
                move || RandomArrivals::new(ports, seed),
            ));
        }
    }
    let (ports, seed) = (4usize, 0xBAD);
    let at = first_difference(
        CongestionPoint::new(ports),
        QoldStuck {
            inner: CongestionPoint::new(ports),
            ports,
        },
        RandomArrivals::new(ports, seed),
    );
    v.push(
        Case::new(
            config(ports),
            "altered: Qold never takes the sampled queue",
            false,
            at + 1000,
            move || QoldStuck {
                inner: CongestionPoint::new(ports),
                ports,
            },
            move || RandomArrivals::new(ports, seed),
        )
        .expecting(Expect::Mismatch(Some(at))),
    );
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "fb_truncated",
                find: "quant  = (-fb * 64'sd63 + fb_max - 64'sd1) / fb_max;\n            \
                       if (quant > 64'sd63) quant = 64'sd63;\n            \
                       if (quant < 64'sd1) quant = 64'sd1;",
                replace: "quant  = (-fb * 64'sd63) / fb_max;\n            \
                          if (quant > 64'sd63) quant = 64'sd63;",
            },
            &["a_fb_range"],
        ),
        (
            RtlAlteration {
                name: "samples_when_off",
                find: "if (on && arr_valid_i[i]",
                replace: "if (arr_valid_i[i]",
            },
            &["a_off_samples_nothing"],
        ),
        (
            RtlAlteration {
                name: "qold_on_every_arrival",
                find: "left_d[o] = left_d[o] - 32'(arr_len_i[i]);",
                replace: "left_d[o] = left_d[o] - 32'(arr_len_i[i]);\n          \
                          qold_d[o] = queue_i[o];",
            },
            &["a_qold_only_on_sample"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(ports),
            alter,
            names,
            20_000,
            move || CongestionPoint::new(ports),
            move || RandomArrivals::new(ports, seed),
        ));
    }
    v
}
