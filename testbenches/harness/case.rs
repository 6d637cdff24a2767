//! A cross-check case: one stimulus on one HDL build, and how to judge its outcome.

use super::{HdlConfig, Outcome, RtlAlteration, crosscheck};
use arnsim::blocks::Block;
use arnsim::stimulus::Stimulus;
use std::path::Path;

/// What a case must show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Every cycle agrees.
    Agree,
    /// The Rust side is deliberately altered: the harness must report a mismatch, at this
    /// cycle when known.
    Mismatch(Option<u64>),
    /// The RTL is deliberately altered (`HdlConfig::alter`): the HDL run must fail with each of
    /// these named assertions.
    Assertions(&'static [&'static str]),
}

type RunFn = dyn Fn(&Path, &Path, bool) -> Result<Outcome, String> + Send + Sync;

/// One case of the cross-check.
pub struct Case {
    /// The HDL build it runs on.
    pub config: HdlConfig,
    /// Short name: `directed rotation`, `random seed 3`, ...
    pub name: String,
    /// Whether the stimulus is seeded-random (counts toward the random-cycle target).
    pub random: bool,
    /// Cycles of stimulus.
    pub cycles: u64,
    /// Expected outcome.
    pub expect: Expect,
    run: Box<RunFn>,
}

impl Case {
    /// A case running `make_block()` on `make_stim()` for `cycles` cycles.
    pub fn new<B, S>(
        config: HdlConfig,
        name: impl Into<String>,
        random: bool,
        cycles: u64,
        make_block: impl Fn() -> B + Send + Sync + 'static,
        make_stim: impl Fn() -> S + Send + Sync + 'static,
    ) -> Case
    where
        B: Block + 'static,
        S: Stimulus<B::In> + 'static,
    {
        Case {
            config,
            name: name.into(),
            random,
            cycles,
            expect: Expect::Agree,
            run: Box::new(move |exe, dir, keep_going| {
                crosscheck(exe, dir, &make_block, &make_stim, cycles, keep_going)
            }),
        }
    }

    /// A case on `config` with its RTL altered by `alter` (`altered RTL: <name>`), which must fail
    /// with each of the assertions in `names`; not counted as random cycles.
    pub fn altered_rtl<B, S>(
        config: HdlConfig,
        alter: RtlAlteration,
        names: &'static [&'static str],
        cycles: u64,
        make_block: impl Fn() -> B + Send + Sync + 'static,
        make_stim: impl Fn() -> S + Send + Sync + 'static,
    ) -> Case
    where
        B: Block + 'static,
        S: Stimulus<B::In> + 'static,
    {
        let name = format!("altered RTL: {}", alter.name);
        let config = HdlConfig {
            alter: Some(alter),
            ..config
        };
        Case::new(config, name, false, cycles, make_block, make_stim)
            .expecting(Expect::Assertions(names))
    }

    /// The same case, expected to mismatch (an altered Rust block) or to fail assertions (an
    /// altered RTL).
    pub fn expecting(mut self, expect: Expect) -> Case {
        self.expect = expect;
        self
    }

    /// Runs the case with the simulator `exe`, writing into `dir`. A case that expects
    /// assertions runs to its end and collects every failing one.
    pub fn run(&self, exe: &Path, dir: &Path) -> Result<Outcome, String> {
        (self.run)(exe, dir, matches!(self.expect, Expect::Assertions(_)))
    }

    /// Directory-safe name.
    pub fn slug(&self) -> String {
        self.name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }
}
