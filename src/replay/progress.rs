//! Deadlock at load. Sends are eager and never block, and a receive waits for one known message,
//! so whether a program finishes does not depend on timing: running it with every message
//! arriving at once finds exactly the ranks a real network would leave waiting.

use super::error::{TraceError, TraceErrors};
use super::program::{Op, Program, sort_errors};

impl Program {
    /// Checks that every rank finishes; otherwise names each rank left waiting, at the line it
    /// waits on, and the message it waits for.
    pub fn check_progress(&self, file: &str) -> Result<(), TraceErrors> {
        let n = self.ranks() as usize;
        let mut pc = vec![0usize; n];
        let mut sent = vec![false; self.messages().len()];
        let mut work: Vec<u32> = (0..self.ranks()).rev().collect();
        while let Some(r) = work.pop() {
            let actions = self.actions(r);
            while let Some(a) = actions.get(pc[r as usize]) {
                match a.op {
                    Op::Compute { .. } => {}
                    Op::Send { msg } => {
                        sent[msg as usize] = true;
                        let m = self.messages()[msg as usize];
                        let waiting = self.actions(m.dst).get(pc[m.dst as usize]);
                        if m.dst != r && waiting.is_some_and(|w| w.op == Op::Wait { slot: m.slot })
                        {
                            work.push(m.dst);
                        }
                    }
                    Op::Wait { slot } => {
                        if !sent[self.received(r)[slot as usize] as usize] {
                            break;
                        }
                    }
                }
                pc[r as usize] += 1;
            }
        }
        let mut errors = Vec::new();
        for r in 0..self.ranks() {
            if let Some(a) = self.actions(r).get(pc[r as usize]) {
                let Op::Wait { slot } = a.op else {
                    unreachable!("only a wait stops a rank")
                };
                let m = self.messages()[self.received(r)[slot as usize] as usize];
                errors.push(TraceError::at_line(
                    file,
                    a.line,
                    None,
                    format!(
                        "deadlock: rank {r} waits forever for the message from rank {} sent at \
                         line {}, which rank {} never reaches{}",
                        m.src,
                        m.send_line,
                        m.src,
                        match self.actions(m.src).get(pc[m.src as usize]) {
                            Some(w) => format!(" (it waits at line {})", w.line),
                            None => String::new(),
                        }
                    ),
                ));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            sort_errors(&mut errors);
            Err(TraceErrors::capped(errors))
        }
    }
}
