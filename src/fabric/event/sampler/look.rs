//! What a part of the event engine looks at in each cycle of a dump to tell at which dumped ports
//! something happened (`sampler.rs`): the marks the engine leaves anyway (the cycle an output was
//! last visited, the detectors evaluated in the cycle stepped, the cycle the packet arriving at
//! an input started; the count of credit records an output took in), the packets an output's
//! visit starts or ends (from the inputs they leave), the packets arriving that have all come in,
//! and the ARN tables whose count may have changed. State kept for speed; it models no hardware.

use super::*;

/// An output looked at in every cycle: the entry of its switch in [`Sampler::switches`], its
/// port there, and whether its probe or credits are dumped.
pub(super) struct Watched {
    pub(super) at: u32,
    pub(super) port: u8,
    pub(super) dumped: bool,
}

/// What happens at a watched output in a cycle: a visit (a tail leaves, a packet is granted),
/// an evaluation of its detector, credit records taken in.
#[derive(Clone, Copy, Debug)]
pub(super) struct Happened {
    visited: bool,
    evaluated: bool,
    credited: bool,
}

/// The input (the port of its switch) of the packet an output of a dumped switch sends, if any.
pub(super) fn leaving(tx: Option<Tx>, first: u32) -> Option<u8> {
    tx.map(|tx| (tx.input - first) as u8)
}

impl<const V: usize> EventCore<V> {
    /// The outputs `flats` visited in cycle `c`, or that took in a credit record, added to
    /// `hits` (`records`: per output, the count of credit records it had taken in, brought up
    /// to date).
    #[inline(never)]
    fn hits(&self, flats: &[u32], records: &mut [u64], hits: &mut Vec<(u32, Happened)>, c: u64) {
        for (i, (&j, seen)) in flats.iter().zip(records.iter_mut()).enumerate() {
            let port = &self.outputs[j as usize];
            let records = port.credits.records(self.vcs);
            let visited = port.last == c;
            if visited || records != *seen {
                let happened = Happened {
                    visited,
                    evaluated: false,
                    credited: records != *seen,
                };
                *seen = records;
                hits.push((i as u32, happened));
            }
        }
    }

    /// Notes in its switch what happens at watched output `i` of `w`.
    #[inline(never)]
    fn happened(&self, w: &mut Sampler<'_>, i: usize, h: Happened) {
        let o = &w.outputs[i];
        let flat = w.flats[i] as usize;
        let d = &mut w.switches[o.at as usize];
        w.pending[o.at as usize / 64] |= 1 << (o.at % 64);
        if o.dumped {
            d.hit.probes |= ((h.visited || h.evaluated) as u64) << o.port;
            d.hit.credits |= ((h.visited || h.credited) as u64) << o.port;
        }
        if h.visited && d.values.inputs != 0 {
            // The inputs of the packet whose tail left and of the one granted: their flits stop
            // or start leaving.
            let q = (d.sending + o.port as u32) as usize;
            let now = leaving(self.outputs[flat].tx, d.first);
            for i in [w.sending[q], now].into_iter().flatten() {
                d.hit.inputs |= 1 << i;
            }
            w.sending[q] = now;
        }
    }

    /// The run's first cycle `c`: every dumped switch is read, and the packets arriving at the
    /// dumped inputs are noted.
    pub(super) fn start(&self, w: &mut Sampler<'_>, c: u64) {
        for k in 0..w.switches.len() as u32 {
            w.list(k);
        }
        for &(j, k) in &w.inputs {
            let a = self.ins[j as usize].arrival;
            let end = a.start + a.len as u64;
            if end > c {
                let p = j - w.switches[k as usize].first;
                w.stops.push(Reverse((end, 64 * k + p)));
            }
        }
    }

    /// Notes in the dumped switches (and lists them) what happens at the ports looked at in
    /// cycle `c`, the packets arriving at dumped inputs that have all come in, and the tables
    /// whose count may have changed.
    #[inline(never)]
    pub(super) fn look(&self, w: &mut Sampler<'_>, c: u64) {
        self.hits(&w.flats, &mut w.records, &mut w.hits, c);
        // The detectors evaluated in `c`, if it was stepped: those of the cycle stepped last.
        if let Some(arn) = &self.arn {
            for &j in &arn.due_now {
                let i = w.watched[j as usize];
                if i != NIL && arn.det_last[j as usize] == c {
                    let happened = Happened {
                        visited: false,
                        evaluated: true,
                        credited: false,
                    };
                    w.hits.push((i, happened));
                }
            }
        }
        for h in 0..w.hits.len() {
            let (i, happened) = w.hits[h];
            self.happened(w, i as usize, happened);
        }
        w.hits.clear();
        for &(j, k) in &w.inputs {
            let a = self.ins[j as usize].arrival;
            if a.start == c && a.len > 0 {
                let d = &mut w.switches[k as usize];
                let p = j - d.first;
                d.hit.inputs |= 1 << p;
                w.pending[k as usize / 64] |= 1 << (k % 64);
                w.stops.push(Reverse((c + a.len as u64, 64 * k + p)));
            }
        }
        while let Some(&Reverse((at, kp))) = w.stops.peek()
            && at <= c
        {
            w.stops.pop();
            let k = kp / 64;
            w.switches[k as usize].hit.inputs |= 1 << (kp % 64);
            w.list(k);
        }
        if let Some(arn) = &self.arn {
            for j in 0..w.tables.len() {
                let k = w.tables[j];
                let d = &mut w.switches[k as usize];
                let (next, expiry) = arn.entries_key(d.switch as usize);
                if next != d.table.0 || c >= expiry {
                    d.hit.entries = true;
                    w.list(k);
                }
            }
        }
    }
}
