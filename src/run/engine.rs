//! What a run may ask of its engine: the event engine's refusals, checked before the fabric is
//! built.

use crate::config::Scenario;
use crate::fabric::Engine;
use crate::fabric::subnet_manager::deadlock;

/// Refuses a run of `s` on `engine` that the engine does not model: on the event engine, a
/// routing it lacks or one that can deadlock, a trace replay, a VCD dump (`dumps`) or a
/// recording (`records`). The error names the flags concerned.
pub fn refuse_unsupported(
    s: &Scenario,
    engine: Engine,
    dumps: bool,
    records: bool,
) -> Result<(), String> {
    if engine == Engine::Event {
        let deadlock =
            deadlock::of_fabric(&s.topology, &s.params)?.is_some_and(|c| c.cycle.is_some());
        let not_with = |what: &str| format!("{what} is not supported on the event engine");
        let refused = crate::fabric::event::unsupported(&s.params, deadlock)
            .or_else(|| s.replay.as_ref().map(|_| not_with("a trace replay")))
            .or_else(|| dumps.then(|| not_with("a VCD dump (--vcd)")))
            .or_else(|| records.then(|| not_with("a recording (--record-switch)")));
        if let Some(why) = refused {
            return Err(format!("--engine event: {why}; use --engine fast"));
        }
    }
    Ok(())
}
