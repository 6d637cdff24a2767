//! Replaying a trace allocates nothing once the replayers are built: a counting global allocator
//! watches every call an end node makes (`advance`, `flits_arrived`, `next_wake`, `finished`,
//! `blocked`) through a whole run of ring allreduces, all-to-alls and point-to-point rounds on
//! 24 ranks placed at random on 10 nodes, driven by a small network that delivers each message
//! in packets of up to 16 flits, all 50 cycles after it was handed over.

use arnsim::config::TimeBase;
use arnsim::replay::{Mapping, Replayer, execution_time, load};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f`.
fn counted<T>(allocs: &mut u64, f: impl FnOnce() -> T) -> T {
    let before = ALLOCS.load(Ordering::Relaxed);
    let t = f();
    *allocs += ALLOCS.load(Ordering::Relaxed) - before;
    t
}

fn main() {
    let p = 24;
    let mut text = format!("ranks {p}\n");
    for r in 0..p {
        let (right, left) = ((r + 1) % p, (r + p - 1) % p);
        for i in 0..3 {
            text += &format!("{r} compute {}ns\n{r} allreduce 65536\n", 100 * (r + i));
            text += &format!("{r} irecv {left} req=1\n{r} isend {right} 3000 req=2\n{r} waitall\n");
            text += &format!("{r} alltoall 512\n{r} send {left} 64\n{r} recv {right}\n");
        }
    }
    let program = load(&text, "generated").expect("trace");
    let mapping = Mapping::random(p, 10, 42).expect("mapping");
    let mut reps =
        Replayer::build_all(&program, &mapping, &TimeBase::default()).expect("replayers");
    let messages = program.messages().len();
    // (arrival cycle, node, receive index, flits), preallocated like the handed-over buffer.
    let packets: usize = program
        .messages()
        .iter()
        .map(|m| m.bytes.div_ceil(1024).max(1) as usize)
        .sum();
    let mut flight = BinaryHeap::with_capacity(packets);
    let mut handed = Vec::with_capacity(messages);
    let (mut allocs, mut calls, mut delivered) = (0u64, 0u64, 0usize);
    let mut now = 0u64;
    loop {
        while let Some(&Reverse((at, node, index, flits))) = flight.peek() {
            if at > now {
                break;
            }
            flight.pop();
            if counted(&mut allocs, || {
                reps[node as usize].flits_arrived(index, flits, at)
            }) {
                delivered += 1;
            }
        }
        for r in reps.iter_mut() {
            calls += 1;
            if counted(&mut allocs, || r.next_wake()).is_some_and(|w| w <= now) {
                counted(&mut allocs, || r.advance(now, |post| handed.push(*post)));
            }
            let stuck = counted(&mut allocs, || r.blocked().count());
            let done = counted(&mut allocs, || r.finished());
            assert!(stuck == 0 || !done);
        }
        for post in handed.drain(..) {
            let mut left = post.flits;
            while left > 0 {
                let flits = left.min(16);
                left -= flits;
                flight.push(Reverse((now + 50, post.dst_node, post.dst_index, flits)));
            }
        }
        let wake = reps.iter().filter_map(|r| r.next_wake()).min();
        let arrival = flight.peek().map(|Reverse(f)| f.0);
        match wake.into_iter().chain(arrival).min() {
            Some(t) => {
                assert!(t > now, "cycle {now} left work to do");
                now = t;
            }
            None => break,
        }
    }
    let time = execution_time(&reps);
    if allocs == 0 && time.is_some() && delivered == messages {
        println!(
            "ok     replay of {messages} messages on {p} ranks, {calls} node visits, finished at \
             cycle {}, 0 allocations",
            time.unwrap_or(0)
        );
    } else {
        println!(
            "FAIL   replay: {allocs} allocations, execution time {time:?}, {delivered} of \
             {messages} messages delivered"
        );
        std::process::exit(1);
    }
}
