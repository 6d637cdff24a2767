//! Recording what one switch of the fabric receives and drives on its ports, cycle by cycle, in
//! the link protocol of `switch.sv` ([`crate::cycle::port`]).
//!
//! The fabric's links carry only head flits and credit-stream records (see [`crate::wire::link`]);
//! a recorder expands them back into what the wires of a real link carry in each cycle: every
//! flit from head to tail, and the credits of each cycle per VC.

use super::*;
use crate::cycle::link_adapter::PortWires;
use crate::cycle::{PortIn, PortOut};
use crate::wire::link::Channel;

/// The recorder of one switch: its ports' wires both ways, and the frames of the window stepped.
pub struct SwitchRecorder<const V: usize> {
    sw: u32,
    ports: usize,
    /// Per port: what it receives (its input link, and credits and ARNs on the reverse of its
    /// output link) and what it drives (its output link, the reverse of its input link).
    receives: Vec<PortWires<V>>,
    drives: Vec<PortWires<V>>,
    cycles: Vec<u64>,
    ins: Vec<PortIn>,
    outs: Vec<PortOut>,
}

impl<const V: usize> SwitchRecorder<V> {
    /// A recorder of switch `sw`, of `ports` ports, from cycle 0.
    pub fn new(sw: u32, ports: usize) -> Self {
        SwitchRecorder {
            sw,
            ports,
            receives: vec![PortWires::default(); ports],
            drives: vec![PortWires::default(); ports],
            cycles: Vec::new(),
            ins: Vec::new(),
            outs: Vec::new(),
        }
    }

    /// The switch recorded.
    pub fn switch(&self) -> u32 {
        self.sw
    }

    /// Before switch `s` steps cycle `c`: what its ports receive.
    pub(super) fn capture_inputs(&mut self, s: &CycleUnit<V>, c: u64, channels: &[Channel<V>]) {
        let w = s.wiring();
        self.cycles.push(c);
        for p in 0..self.ports {
            let head = channels[w.in_ch[p] as usize].recv_flit(c);
            let back = channels[w.out_ch[p] as usize].recv_back(c);
            self.ins.push(self.receives[p].receive(head.as_ref(), back));
        }
    }

    /// Port `p` in cycle `c` as link records: what it received (the head on its input link, the
    /// return record on its output link) and sent; the ports of a cycle come in port order.
    pub(super) fn capture_port(
        &mut self,
        c: u64,
        p: usize,
        got: event::PortRecords<V>,
        sent: event::PortRecords<V>,
    ) {
        if p == 0 {
            self.cycles.push(c);
        }
        self.ins
            .push(self.receives[p].receive(got.0.as_ref(), got.1.as_ref()));
        self.outs
            .push(self.drives[p].drive(sent.0.as_ref(), sent.1.as_ref()));
    }

    /// After switch `s` stepped cycle `c`, sending into `ob`: what its ports drove.
    pub(super) fn capture_outputs(&mut self, s: &CycleUnit<V>, ob: &Outbox<V>, c: u64) {
        let w = s.wiring();
        for p in 0..self.ports {
            let head = ob
                .flits()
                .iter()
                .find(|&&(t, ch, _)| t == c && ch == w.out_ch[p])
                .map(|(_, _, f)| f);
            let back = ob
                .backs()
                .iter()
                .find(|&&(t, ch, _)| t == c && ch == w.in_ch[p])
                .map(|(_, _, b)| b);
            self.outs.push(self.drives[p].drive(head, back));
        }
    }

    /// The frames of the window stepped: (cycle, inputs per port, outputs per port).
    pub fn frames(&self) -> impl Iterator<Item = (u64, &[PortIn], &[PortOut])> + '_ {
        self.cycles.iter().enumerate().map(|(k, &c)| {
            let r = k * self.ports..(k + 1) * self.ports;
            (c, &self.ins[r.clone()], &self.outs[r])
        })
    }

    /// Forgets the frames handed on.
    pub(super) fn clear_frames(&mut self) {
        self.cycles.clear();
        self.ins.clear();
        self.outs.clear();
    }
}

/// Where a recording run hands its frames: (switch, cycle, inputs per port, outputs per port);
/// an error stops the run.
pub type FrameSink<'a> = dyn FnMut(u32, u64, &[PortIn], &[PortOut]) -> Result<(), Violation> + 'a;

impl<const V: usize> Fabric<V> {
    /// From now on (the fabric's first cycle), records the ports of the switches `record` cycle
    /// by cycle, until [`Fabric::stop_recording`]; [`Fabric::drain_recordings`] hands the frames
    /// on. A recording fabric steps on one thread (its outputs are those of any thread count).
    pub fn record(&mut self, record: &[u32]) {
        assert_eq!(
            self.now, 0,
            "a recording starts at the fabric's first cycle"
        );
        self.recorders = (0..self.switches.len()).map(|_| None).collect();
        self.set_threads(self.threads);
        for &k in record {
            let ports = self.switches[k as usize].ports();
            self.recorders[k as usize] = Some(Box::new(SwitchRecorder::new(k, ports)));
            self.switch_pace[k as usize].tapped = true;
            if let Wing::Event(e) = &mut self.wing {
                e.record(k);
            }
        }
    }

    /// Whether switch `k` is being recorded.
    pub(super) fn recorded(&self, k: usize) -> bool {
        self.recorders.get(k).is_some_and(|r| r.is_some())
    }

    /// Hands every recorded switch's frames since the last call to `sink` (switch by switch, each
    /// in cycle order) and forgets them; the first error of the sink is returned.
    pub fn drain_recordings(&mut self, sink: &mut FrameSink<'_>) -> Result<(), Violation> {
        let mut r = Ok(());
        for rec in self.recorders.iter_mut().flatten() {
            for (c, i, o) in rec.frames() {
                if r.is_ok() {
                    r = sink(rec.switch(), c, i, o);
                }
            }
            rec.clear_frames();
        }
        r
    }

    /// Ends the recording; the fabric steps on the threads it had before.
    pub fn stop_recording(&mut self) {
        self.recorders.clear();
        if let Wing::Event(e) = &mut self.wing {
            e.stop_recording();
        }
        for pace in &mut self.switch_pace {
            pace.tapped = false;
        }
        self.set_threads(self.threads);
    }

    /// [`Fabric::run`], recording the ports of the switches `record`: after each window `sink`
    /// gets their frames and may stop the run by returning an error (handed back).
    pub fn run_recorded<O: Observer>(
        &mut self,
        cycles: u64,
        obs: &mut O,
        record: &[u32],
        sink: &mut FrameSink<'_>,
    ) -> Result<(), Violation> {
        self.record(record);
        let end = self.now + cycles;
        let mut r = Ok(());
        while self.now < end && r.is_ok() {
            let w = (end - self.now).min(self.window);
            r = match self.wing {
                Wing::Event(_) => self.run_events(w, None),
                Wing::Cycle(_) => self.step_window(w, obs, None),
            };
            let d = self.drain_recordings(sink);
            r = r.and(d);
        }
        self.stop_recording();
        self.catch_up(self.now);
        r
    }
}

/// The switch whose output first becomes a congestion root within `cycles` cycles of a fabric
/// built as `build` does, and that cycle (`None` when no root forms): of the roots of the first
/// cycle with any, the lowest switch's.
pub fn first_root<const V: usize>(
    build: impl FnOnce() -> Result<Fabric<V>, String>,
    cycles: u64,
) -> Result<Option<(u32, u64)>, String> {
    let mut f = build()?;
    f.set_engine(Engine::Event);
    let mut events = Vec::new();
    while f.now() < cycles {
        f.run((cycles - f.now()).min(1024), &mut events)
            .map_err(|v| v.to_string())?;
        let root = events.iter().find_map(|&(c, sw, ev)| match ev {
            SwitchEvent::RootDetected { .. } => Some((sw, c)),
            _ => None,
        });
        if let Some(r) = root.or(f.first_root().map(|(c, sw)| (sw, c))) {
            return Ok(Some(r));
        }
        events.clear();
    }
    Ok(None)
}
