//! Criterion bench: the cost of a checkpoint (`docs/checkpoints.md`) of configurations 1 and 2
//! of the paper (`paper/config1_h10`: 432 nodes, 180 switches; `paper/config2_h10`: 3,456 nodes,
//! 720 switches) after 20,000 cycles: the state serialised into memory, written into its file
//! (synced), and taken back by a run built anew. Each prints the checkpoint's size.

use arnsim::run::checkpoint::{self, Header};
use arnsim::run::{Run, Stepping, Stop};
use arnsim::wire::link::FEW_VCS;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

/// The binary's allocator (`src/main.rs`), so the fabrics lie in the pages a run gives them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WARM_UP: u64 = 20_000;

fn checkpoints(c: &mut Criterion) {
    let mut g = c.benchmark_group("checkpoint");
    g.sample_size(10);
    let never = Stop::never();
    let how = Stepping::new(1, &never);
    for name in ["config1_h10", "config2_h10"] {
        let s = arnsim::cli::run::load(&format!("paper/{name}"), &[]).expect("bundled scenario");
        assert_eq!(
            arnsim::wire::link::lanes_for(s.params.switch.vcs()),
            FEW_VCS
        );
        let mut run = Run::<FEW_VCS>::new(&s, &how).expect("run");
        while run.now() < WARM_UP {
            run.step_chunk().expect("step");
        }
        let mut state = Vec::new();
        run.save(&mut state).expect("save");
        eprintln!(
            "{name}: checkpoint of {} bytes at cycle {}",
            state.len(),
            run.now()
        );
        g.bench_function(format!("{name}/save_to_memory"), |b| {
            b.iter(|| {
                let mut v = Vec::with_capacity(state.len());
                run.save(&mut v).expect("save");
                v
            })
        });
        let path = std::env::temp_dir().join(format!("arnsim-bench-{}.ckpt", std::process::id()));
        let header = Header {
            build: 0,
            inputs: 0,
            command: vec![],
            cwd: std::env::temp_dir(),
            pid: std::process::id(),
            threads: 1,
            lanes: FEW_VCS,
            cycle: run.now(),
            cycles: s.sim_cycles,
            dumps: vec![],
        };
        g.bench_function(format!("{name}/write_file_synced"), |b| {
            b.iter(|| checkpoint::write(&path, &header, |w| run.save(w)).expect("write"))
        });
        let _ = std::fs::remove_file(&path);
        g.bench_function(format!("{name}/take_back"), |b| {
            b.iter_batched(
                || Run::<FEW_VCS>::new(&s, &how).expect("run"),
                |mut fresh| {
                    fresh.restore(&state).expect("restore");
                    fresh
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, checkpoints);
criterion_main!(benches);
