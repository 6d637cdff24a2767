//! ARN and ARN + AFI on the event engine (Rocher-Gonzalez et al., section 3): each switch
//! output's congestion detector (`blocks::congestion_detector`), each switch's ARN table with its
//! TTL timers (`blocks::arn_table`) and processARN command queue, and the ARNs an input sends
//! upstream. The timing is the cycle engine's (`docs/switch.md`): in a cycle a switch first
//! evaluates its detectors on the occupancies and credits of the cycle before, then takes in the
//! ARNs arriving at its outputs, then its routing stage processes one command and routes the
//! heads that arrived in the cycle before on the table's lookups.
//!
//! A detector is evaluated in every cycle while it is not idle with an empty crossed set, or one
//! of its VOQs may be above HCDTh (the flits of the packets routed to it, counted whole, are);
//! otherwise a step would keep all its registers. A table is stepped only when a command reaches
//! it; between, its cycles pass as ageing (an entry that expires is stepped out in its cycle).
//! An input's lookup reads the table as of the cycle its head arrived, so the ARN it sends in
//! the routing stage of the next cycle is filed as the head arrives: it reaches a part that
//! steps another thread a link latency plus one cycle later, as every event between parts.

use super::*;
use crate::blocks::Block;
use crate::blocks::arn_table::{ArnLookupResult, ArnProcess, ArnTable, ArnTableIn, ArnTableOut};
use crate::blocks::congestion_detector::{CongestionDetector, CongestionDetectorIn};
use crate::blocks::lft_banks::NO_ROUTE;
use crate::switch::routing_stage::{alternative, arn_lookup, sends_arn, upstream_arn};
use crate::wire::arn::ArnInfo;
use heapless::Deque;

/// Depth of a switch's processARN command queue (the cycle engine's).
const CMD_DEPTH: usize = 64;

/// The ARN state of one part's switches (entries of the other parts' switches and ports stay
/// at reset).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct ArnState {
    /// Per flat output: its detector, and the root it holds with its next refresh; whether it
    /// is tracked (not quiet, or a VOQ of its output may be above HCDTh), the cycle it is next
    /// evaluated in (`u64::MAX`: none filed) and the last cycle it stepped or held through.
    pub(super) dets: Vec<CongestionDetector>,
    pub(super) roots: Vec<Option<(ArnInfo, u64)>>,
    pub(super) tracked: Vec<bool>,
    pub(super) det_due: Vec<u64>,
    pub(super) det_last: Vec<u64>,
    /// The detectors due in the cycle being stepped (flat outputs).
    pub(super) due_now: Vec<u32>,
    /// Per switch: its ARN table and the first cycle it has not stepped (`u64::MAX` while the
    /// table is empty, whose idle cycles change nothing), its command queue and the last ARN
    /// id's sequence number; the switches with a command queued.
    tables: Vec<ArnTable>,
    table_next: Vec<u64>,
    cmds: Vec<Deque<(ArnInfo, bool), CMD_DEPTH>>,
    cmd_switches: Vec<u32>,
    pub(super) seq: Vec<u32>,
    /// Per flat input, per table entry: the first cycle it may send an ARN for the entry again.
    ok_at: Vec<u64>,
    entries: usize,
    /// Per flat input: the lookup of the head its routing stage routes next.
    pub(super) lookups: Vec<ArnLookupResult>,
    /// ARNs on their way to this part's outputs (an event's `arg`), and the free ones.
    pool: Vec<ArnInfo>,
    free: Vec<u32>,
    /// The ARNs arriving in the cycle being stepped: (flat output, pool index).
    arrivals: Vec<(u32, u32)>,
    table_in: Box<ArnTableIn>,
    table_out: Box<ArnTableOut>,
    pub(super) det_in: Box<CongestionDetectorIn>,
    /// Per input of the detector being evaluated: its head's VC downstream.
    #[serde(with = "serde_big_array::BigArray")]
    pub(super) head_vc: [u8; 64],
    /// ARNs decided for the routing stage of a cycle: (that cycle, how many).
    sent_in: (u64, u64),
}

impl ArnState {
    /// The ARN state of a fabric of `f`'s switches with `ports` flat ports, for a part owning
    /// `owned` inputs.
    pub(super) fn new<const V: usize>(f: &Fabric<V>, ports: usize, owned: usize) -> Self {
        let sp = &f.params.switch;
        let mut dets = Vec::with_capacity(ports);
        for unit in &f.switches {
            for _ in 0..unit.ports() {
                dets.push(CongestionDetector::new(sp.detector(unit.ports())));
            }
        }
        let switches = f.switches.len();
        ArnState {
            dets,
            roots: vec![None; ports],
            tracked: vec![false; ports],
            det_due: vec![u64::MAX; ports],
            det_last: vec![0; ports],
            due_now: Vec::with_capacity(ports),
            tables: f
                .switches
                .iter()
                .map(|u| ArnTable::new(sp.arn_entries, u.ports(), sp.arn_ttl))
                .collect(),
            table_next: vec![u64::MAX; switches],
            cmds: (0..switches).map(|_| Deque::new()).collect(),
            cmd_switches: Vec::with_capacity(switches),
            seq: vec![0; switches],
            ok_at: vec![0; ports * sp.arn_entries],
            entries: sp.arn_entries,
            lookups: vec![ArnLookupResult::default(); ports],
            pool: Vec::with_capacity(owned),
            free: Vec::with_capacity(owned),
            arrivals: Vec::with_capacity(owned),
            table_in: Box::default(),
            table_out: Box::default(),
            det_in: Box::default(),
            head_vc: [0; 64],
            sent_in: (0, 0),
        }
    }

    /// Whether a cycle has commands to process.
    #[inline]
    pub(super) fn busy(&self) -> bool {
        !self.cmd_switches.is_empty()
    }

    /// ARNs counted as sent that leave after cycle `last`.
    pub(super) fn sent_after(&self, last: u64) -> u64 {
        if self.sent_in.0 > last {
            self.sent_in.1
        } else {
            0
        }
    }

    /// Valid entries of switch `s`'s table at the end of cycle `now` (the table has stepped
    /// no cycle after it): those left after the cycles it has not stepped.
    pub(super) fn entries_at(&self, s: usize, now: u64) -> u64 {
        match self.table_next[s] {
            u64::MAX => 0,
            next => self.tables[s].live_after((now + 1).saturating_sub(next)) as u64,
        }
    }

    /// What switch `s`'s count of valid entries hangs on between the cycles its table steps in:
    /// the cycle it steps next (`u64::MAX` while empty; each step changes it) and the first cycle
    /// an entry may expire in, the count ([`ArnState::entries_at`]) the same until then.
    pub(super) fn entries_key(&self, s: usize) -> (u64, u64) {
        let next = self.table_next[s];
        (next, next.saturating_add(self.tables[s].idle_for() as u64))
    }

    /// Switch `s`'s table steps the cycles before `upto` it has not stepped, with no command.
    #[inline(always)]
    fn catch_up(&mut self, s: usize, upto: u64) {
        if self.table_next[s] < upto {
            self.step_idle(s, upto);
        }
    }

    /// [`ArnState::catch_up`] of a table with cycles to step.
    #[inline(never)]
    fn step_idle(&mut self, s: usize, upto: u64) {
        let mut next = self.table_next[s];
        let t = &mut self.tables[s];
        while next < upto {
            let k = (upto - next).min(t.idle_for() as u64);
            if k > 0 {
                t.age_idle(k as u32);
                next += k;
            }
            if next < upto {
                // An entry expires in this cycle.
                t.evaluate_into(&self.table_in, 0, &mut self.table_out);
                t.commit();
                next += 1;
            }
        }
        self.table_next[s] = if t.count() > 0 { upto } else { u64::MAX };
    }

    /// Queues a processARN command at switch `s`.
    pub(super) fn file_cmd(
        &mut self,
        s: u32,
        info: ArnInfo,
        adapted: bool,
        stats: &mut SwitchStats,
    ) {
        let q = &mut self.cmds[s as usize];
        let was_empty = q.is_empty();
        if q.push_back((info, adapted)).is_err() {
            stats.arn_commands_dropped += 1;
        } else if was_empty {
            self.cmd_switches.push(s);
        }
    }

    /// A pool entry holding `info`.
    fn alloc(&mut self, info: ArnInfo) -> u32 {
        match self.free.pop() {
            Some(k) => {
                self.pool[k as usize] = info;
                k
            }
            None => {
                self.pool.push(info);
                (self.pool.len() - 1) as u32
            }
        }
    }
}

impl<const V: usize> EventCore<V> {
    /// The flat index of switch `s`'s port 0.
    #[inline]
    pub(super) fn first_port(&self, s: u32) -> u32 {
        self.first[s as usize]
    }

    /// Takes in the ARNs of `list` (cycle `now`'s events), in output order per switch: each
    /// queues a processARN command at its switch.
    pub(super) fn take_arns(&mut self, list: &[Ev], now: u64) {
        let Some(mut arn) = self.arn.take() else {
            return;
        };
        arn.arrivals.clear();
        arn.arrivals.extend(
            list.iter()
                .filter(|ev| ev.kind == Kind::Arn)
                .map(|ev| (ev.unit, ev.arg)),
        );
        arn.arrivals.sort_unstable();
        for j in 0..arn.arrivals.len() {
            let (out, k) = arn.arrivals[j];
            let mut info = arn.pool[k as usize];
            arn.free.push(k);
            self.note_arn(out, info, now, true);
            let Place { switch, port, .. } = self.ins[out as usize].place;
            info.port = port as u8;
            self.stats.arns_received += 1;
            arn.file_cmd(switch, info, false, &mut self.stats);
        }
        self.arn = Some(arn);
    }

    /// The processARN commands of cycle `r`: one per switch with any (pseudo-code 2).
    pub(super) fn process_cmds(&mut self, env: &Env<V>, r: u64) {
        let Some(mut arn) = self.arn.take() else {
            return;
        };
        let sp = &env.params.switch;
        let mut j = 0;
        while j < arn.cmd_switches.len() {
            let s = arn.cmd_switches[j] as usize;
            let Some((info, adapted)) = arn.cmds[s].pop_front() else {
                arn.cmd_switches.swap_remove(j);
                continue;
            };
            let unit = &env.switches[s];
            let consumed = !adapted && unit.wiring().stage == info.root_info;
            let alt_port = if consumed {
                let base = self.first_port(s as u32);
                let row = unit.lft().options(info.dest | 1);
                alternative(sp, &row, unit.ports(), info.port, info.vc, |p, vc| {
                    let o = &self.outputs[(base + p as u32) as usize];
                    o.credits.credits(vc, r.saturating_sub(1))
                })
            } else {
                NO_ROUTE
            };
            arn.catch_up(s, r);
            arn.table_in.pr = ArnProcess::of(&info, consumed, alt_port, adapted);
            let t = &mut arn.tables[s];
            t.evaluate_into(&arn.table_in, 0, &mut arn.table_out);
            t.commit();
            arn.table_in.pr = ArnProcess::default();
            arn.table_next[s] = if t.count() > 0 { r + 1 } else { u64::MAX };
            if !adapted && consumed && !arn.table_out.pr_hit {
                self.stats.arns_consumed += 1;
            }
            if arn.cmds[s].is_empty() {
                arn.cmd_switches.swap_remove(j);
            } else {
                j += 1;
            }
        }
        self.arn = Some(arn);
    }

    /// The head in slot `k` reached flat input `input` of switch `s` in `now`: its lookup, on
    /// the table as of `now`, for the routing stage of `now + 1`, and the ARN that stage sends
    /// upstream if the head hits an entry it does not consume (pseudo-code 4's sendARN: at most
    /// one per entry and input per `arn_gap` cycles).
    pub(super) fn look_up(&mut self, env: &Env<V>, input: u32, k: u32, det: u8, now: u64) {
        let Some(mut arn) = self.arn.take() else {
            return;
        };
        let sp = &env.params.switch;
        let Place { switch: s, .. } = self.ins[input as usize].place;
        let pkt = self.slots[k as usize].pkt;
        let req = arn_lookup(sp, &pkt);
        arn.catch_up(s as usize, now + 1);
        let res = if arn.table_next[s as usize] == u64::MAX {
            ArnLookupResult::default()
        } else {
            arn.tables[s as usize].lookup(&req)
        };
        arn.lookups[input as usize] = res;
        let r = now + 1;
        let e = input as usize * arn.entries + res.idx as usize;
        if sends_arn(sp, &pkt, det, &res) && r >= arn.ok_at[e] {
            arn.ok_at[e] = r + sp.arn_gap as u64;
            let info = upstream_arn(sp, &pkt, &res);
            if arn.sent_in.0 != r {
                arn.sent_in = (r, 0);
            }
            arn.sent_in.1 += 1;
            self.stats.arns_sent += 1;
            self.note_arn(input, info, r, false);
            let up = self.ins[input as usize].up;
            match up.peer() {
                Peer::Port(out) => {
                    let at = r + self.latency;
                    if up.part() == self.part {
                        let mut ev = Ev::new(Kind::Arn, out);
                        ev.arg = arn.alloc(info);
                        self.cal.push(at, ev);
                    } else {
                        self.outbox[up.part() as usize].push(Crossing {
                            at,
                            ev: Ev::new(Kind::Arn, out),
                            pkt: Packet::default(),
                            arn: info,
                        });
                    }
                }
                Peer::Node(n) => {
                    let odd = (r & 1) as usize;
                    let b = &mut self.node_back[odd][n as usize];
                    if b.is_empty() {
                        self.backs_due[odd].push(n);
                    }
                    b.arn = Some(info);
                }
            }
        }
        self.arn = Some(arn);
    }

    /// Files an ARN another part sent for this part's output `out`, arriving in `at`.
    pub(super) fn file_arn(&mut self, at: u64, out: u32, info: ArnInfo) {
        let Some(arn) = self.arn.as_mut() else {
            return;
        };
        let mut ev = Ev::new(Kind::Arn, out);
        ev.arg = arn.alloc(info);
        self.cal.push(at, ev);
    }
}
