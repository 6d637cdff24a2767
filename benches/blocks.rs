//! Criterion benches of single blocks: cycles per second of evaluate + commit.

use arnsim::blocks::rr_arbiter::RrArbiterIn;
use arnsim::blocks::{Block, RrArbiter};
use arnsim::stimulus::SplitMix64;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn rr_arbiter(c: &mut Criterion) {
    let mut g = c.benchmark_group("rr_arbiter");
    for n in [12usize, 96, 128] {
        let mut rng = SplitMix64::new(1);
        let inputs: Vec<RrArbiterIn> = (0..1024)
            .map(|_| RrArbiterIn {
                req: rng.next_u128(),
                ack: true,
            })
            .collect();
        let mut a = RrArbiter::new(n);
        g.throughput(Throughput::Elements(inputs.len() as u64));
        g.bench_function(format!("n{n}_1024_cycles"), |b| {
            b.iter(|| {
                for i in &inputs {
                    black_box(a.step(black_box(i)));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, rr_arbiter);
criterion_main!(benches);
