//! Criterion benches of single blocks: cycles per second of evaluate + commit, on the blocks'
//! seeded random stimulus (generated before timing).

use arnsim::blocks::congestion_detector::DetectorConfig;
use arnsim::blocks::{ArnTable, Block, CongestionDetector, CreditCounter, LftBanks, RrArbiter};
use arnsim::stimulus::Stimulus;
use arnsim::stimulus::arn_table::RandomArnOps;
use arnsim::stimulus::congestion_detector::RandomCongestion;
use arnsim::stimulus::credit_counter::RandomCredits;
use arnsim::stimulus::lft_banks::RandomLft;
use arnsim::stimulus::rr_arbiter::RandomRequests;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const CYCLES: u64 = 4096;

fn bench_block<B: Block, S: Stimulus<B::In>>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    mut block: B,
    mut stim: S,
) {
    let inputs: Vec<B::In> = (0..CYCLES).map(|c| stim.next(c)).collect();
    g.throughput(Throughput::Elements(CYCLES));
    g.bench_function(name, |b| {
        b.iter(|| {
            for i in &inputs {
                black_box(block.step(black_box(i)));
            }
        })
    });
}

fn blocks(c: &mut Criterion) {
    let mut g = c.benchmark_group("block_cycles");
    for n in [12usize, 96, 128] {
        bench_block(
            &mut g,
            &format!("rr_arbiter_n{n}"),
            RrArbiter::new(n),
            RandomRequests::new(n, 1),
        );
    }
    bench_block(
        &mut g,
        "credit_counter",
        CreditCounter::new(5376),
        RandomCredits::new(5376, 1, false),
    );
    bench_block(
        &mut g,
        "lft_banks_lmc3",
        LftBanks::new(3, 432),
        RandomLft::new(3, 432, CYCLES, 1),
    );
    bench_block(
        &mut g,
        "arn_table_16x12",
        ArnTable::new(16, 12, 10_000),
        RandomArnOps::new(12, 10_000, 1),
    );
    let cfg = DetectorConfig::from_percent(12, 5376, 2688, 976_563);
    bench_block(
        &mut g,
        "congestion_detector_p12",
        CongestionDetector::new(cfg),
        RandomCongestion::new(cfg, 1),
    );
    g.finish();
}

criterion_group!(benches, blocks);
criterion_main!(benches);
