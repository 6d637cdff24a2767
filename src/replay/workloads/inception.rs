//! Data-parallel training of Inception-v3 (Szegedy et al., "Rethinking the Inception
//! Architecture for Computer Vision", CVPR 2016) as an MPI trace: every rank holds the whole
//! model, computes the forward and backward pass of its own batch, then sums the gradients with
//! one ring allreduce per gradient bucket, as PyTorch's DistributedDataParallel buckets them.
//!
//! The layers are those of the Keras definition (`keras/applications/inception_v3.py`,
//! keras-team/keras): convolutions without bias, each followed by a batch normalization with a
//! learned offset (beta) but no scale, and the 1000-class dense layer; 23,817,352 trainable
//! parameters (23,851,784 with the normalizations' moving means and variances). The parameter
//! tensors are listed in definition order (kernel, then beta, per convolution) and cut into
//! buckets as `_compute_bucket_assignment_by_size` does: a bucket closes once it holds at least
//! its limit, the first limit 1 MiB and the others the bucket cap (25 MiB); the buckets are then
//! reduced last-defined first, the order gradients come out of the backward pass.
//!
//! Per rank the trace is: a broadcast of the whole model state from rank 0 (DDP's constructor),
//! then per step one `compute` (forward and backward: `batch / images_per_s`) and the bucket
//! allreduces. The collectives block, so the overlap of the backward pass with the allreduces
//! is not modelled. The numbers and their sources: docs/workloads.md.

use crate::replay::program::MAX_MESSAGES;
use crate::replay::trace::{MAX_BYTES, MAX_COMPUTE_PS, MAX_RANKS, Trace, TraceOp};

/// Bytes of an fp32 value.
const FLOAT: u64 = 4;

/// One MiB.
pub const MIB: u64 = 1 << 20;

/// DDP's first bucket limit (`_DEFAULT_FIRST_BUCKET_BYTES`).
pub const FIRST_BUCKET_BYTES: u64 = MIB;

/// One parameter tensor of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// The layer group it belongs to (`stem`, `mixed0` ... `mixed10`, `predictions`).
    pub group: &'static str,
    /// Values it holds.
    pub params: u64,
    /// Whether it is trained (has a gradient); the moving statistics are not.
    pub trainable: bool,
}

/// Builds the tensor list, keeping the channel count between layers.
struct Model {
    tensors: Vec<Tensor>,
    group: &'static str,
}

impl Model {
    /// `conv2d_bn`: a `kh x kw` convolution from `cin` to `cout` channels and its
    /// normalization; returns `cout`.
    fn conv(&mut self, cin: u64, cout: u64, kh: u64, kw: u64) -> u64 {
        let group = self.group;
        let t = |params, trainable| Tensor {
            group,
            params,
            trainable,
        };
        self.tensors.push(t(kh * kw * cin * cout, true));
        self.tensors.push(t(cout, true)); // beta
        self.tensors.push(t(cout, false)); // moving mean
        self.tensors.push(t(cout, false)); // moving variance
        cout
    }

    /// Mixed 0 to 2 (35 x 35): 1x1; 1x1-5x5; 1x1-3x3-3x3; pool-1x1 of `pool` channels.
    fn block35(&mut self, c: u64, pool: u64) -> u64 {
        let a = self.conv(c, 64, 1, 1);
        let b = self.conv(c, 48, 1, 1);
        let b = self.conv(b, 64, 5, 5);
        let d = self.conv(c, 64, 1, 1);
        let d = self.conv(d, 96, 3, 3);
        let d = self.conv(d, 96, 3, 3);
        let p = self.conv(c, pool, 1, 1);
        a + b + d + p
    }

    /// Mixed 4 to 7 (17 x 17) with `m` channels inside the factorized 7x7 branches.
    fn block17(&mut self, c: u64, m: u64) -> u64 {
        let a = self.conv(c, 192, 1, 1);
        let b = self.conv(c, m, 1, 1);
        let b = self.conv(b, m, 1, 7);
        let b = self.conv(b, 192, 7, 1);
        let d = self.conv(c, m, 1, 1);
        let d = self.conv(d, m, 7, 1);
        let d = self.conv(d, m, 1, 7);
        let d = self.conv(d, m, 7, 1);
        let d = self.conv(d, 192, 1, 7);
        let p = self.conv(c, 192, 1, 1);
        a + b + d + p
    }

    /// Mixed 9 and 10 (8 x 8), with the split 1x3 / 3x1 branches.
    fn block8(&mut self, c: u64) -> u64 {
        let a = self.conv(c, 320, 1, 1);
        let b = self.conv(c, 384, 1, 1);
        let b = self.conv(b, 384, 1, 3) + self.conv(b, 384, 3, 1);
        let d = self.conv(c, 448, 1, 1);
        let d = self.conv(d, 384, 3, 3);
        let d = self.conv(d, 384, 1, 3) + self.conv(d, 384, 3, 1);
        let p = self.conv(c, 192, 1, 1);
        a + b + d + p
    }
}

/// The parameter tensors of Inception-v3 with its 1000-class top, in definition order.
pub fn tensors() -> Vec<Tensor> {
    let mut m = Model {
        tensors: Vec::new(),
        group: "stem",
    };
    let c = m.conv(3, 32, 3, 3);
    let c = m.conv(c, 32, 3, 3);
    let c = m.conv(c, 64, 3, 3);
    let c = m.conv(c, 80, 1, 1);
    let mut c = m.conv(c, 192, 3, 3);
    for (name, pool) in [("mixed0", 32), ("mixed1", 64), ("mixed2", 64)] {
        m.group = name;
        c = m.block35(c, pool);
    }
    m.group = "mixed3";
    let a = m.conv(c, 384, 3, 3);
    let d = m.conv(c, 64, 1, 1);
    let d = m.conv(d, 96, 3, 3);
    let d = m.conv(d, 96, 3, 3);
    c += a + d; // the max-pool branch passes `c` channels through
    for (name, inner) in [
        ("mixed4", 128),
        ("mixed5", 160),
        ("mixed6", 160),
        ("mixed7", 192),
    ] {
        m.group = name;
        c = m.block17(c, inner);
    }
    m.group = "mixed8";
    let a = m.conv(c, 192, 1, 1);
    let a = m.conv(a, 320, 3, 3);
    let d = m.conv(c, 192, 1, 1);
    let d = m.conv(d, 192, 1, 7);
    let d = m.conv(d, 192, 7, 1);
    let d = m.conv(d, 192, 3, 3);
    c += a + d;
    for name in ["mixed9", "mixed10"] {
        m.group = name;
        c = m.block8(c);
    }
    let classes = 1000;
    let dense = |params| Tensor {
        group: "predictions",
        params,
        trainable: true,
    };
    m.tensors.push(dense(c * classes));
    m.tensors.push(dense(classes));
    m.tensors
}

/// Trainable parameters: the values whose gradients are summed every step.
pub fn trainable_params() -> u64 {
    tensors()
        .iter()
        .filter(|t| t.trainable)
        .map(|t| t.params)
        .sum()
}

/// All values of the model state (parameters and moving statistics), which DDP broadcasts.
pub fn state_params() -> u64 {
    tensors().iter().map(|t| t.params).sum()
}

/// DDP's buckets of `sizes` (gradient bytes in definition order): a bucket closes once it
/// holds at least its limit (`limits`, the last repeated); returned in reduction order
/// (last-defined first).
pub fn buckets(sizes: &[u64], limits: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut current = 0;
    for &s in sizes {
        current += s;
        if current >= limits[out.len().min(limits.len() - 1)] {
            out.push(current);
            current = 0;
        }
    }
    if current > 0 {
        out.push(current);
    }
    out.reverse();
    out
}

/// The parameters of one training run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inception {
    /// Ranks (data-parallel workers).
    pub ranks: u32,
    /// Training steps.
    pub steps: u32,
    /// Images per rank and step.
    pub batch: u64,
    /// Training throughput of one worker, images per second.
    pub images_per_s: u64,
    /// Bucket cap in bytes (DDP's `bucket_cap_mb`, 25 MiB).
    pub bucket_bytes: u64,
}

impl Default for Inception {
    /// The run of docs/workloads.md: 512 ranks, 3 steps, batch 32 at 128 images/s (250 ms of
    /// compute a step), 25 MiB buckets.
    fn default() -> Self {
        Inception {
            ranks: 512,
            steps: 3,
            batch: 32,
            images_per_s: 128,
            bucket_bytes: 25 * MIB,
        }
    }
}

impl Inception {
    /// Forward and backward time of one step, in picoseconds (rounded down).
    pub fn compute_ps(&self) -> u64 {
        (self.batch as u128 * 1_000_000_000_000 / self.images_per_s.max(1) as u128) as u64
    }

    /// Gradient bytes of each bucket, in reduction order.
    pub fn bucket_sizes(&self) -> Vec<u64> {
        let sizes: Vec<u64> = tensors()
            .iter()
            .filter(|t| t.trainable)
            .map(|t| t.params * FLOAT)
            .collect();
        buckets(&sizes, &[FIRST_BUCKET_BYTES, self.bucket_bytes])
    }

    /// Refuses what cannot be written as a trace.
    pub fn check(&self) -> Result<(), String> {
        if self.ranks == 0 || self.ranks > MAX_RANKS {
            return Err(format!(
                "ranks must be 1 to {MAX_RANKS}, not {}",
                self.ranks
            ));
        }
        if self.steps == 0 || self.batch == 0 || self.images_per_s == 0 {
            return Err("steps, batch and images per second must be at least 1".into());
        }
        if self.compute_ps() > MAX_COMPUTE_PS {
            return Err(format!(
                "a step of {} images at {} images/s computes beyond a trace's 1000 s",
                self.batch, self.images_per_s
            ));
        }
        if self.bucket_bytes == 0 {
            return Err("the bucket cap must be at least 1 byte".into());
        }
        if state_params() * FLOAT > MAX_BYTES {
            return Err("the model state is larger than a trace's largest message".into());
        }
        // A ring allreduce of p ranks sends 2p(p - 1) messages; one per bucket and step.
        let p = u128::from(self.ranks);
        let per_step = self.bucket_sizes().len() as u128 * 2 * p * (p - 1);
        let messages = per_step * u128::from(self.steps);
        if messages > u128::from(MAX_MESSAGES) {
            return Err(format!(
                "{} steps on {} ranks send {messages} messages, more than a trace may hold \
                 ({MAX_MESSAGES})",
                self.steps, self.ranks
            ));
        }
        Ok(())
    }

    /// The trace: the broadcast of the model state, then per step the compute and the bucket
    /// allreduces, on every rank.
    pub fn trace(&self) -> Result<Trace, String> {
        self.check()?;
        let mut t = Trace::new(self.ranks);
        let all = |t: &mut Trace, op: TraceOp| {
            for r in 0..self.ranks {
                t.push(r, op);
            }
        };
        let state = state_params() * FLOAT;
        all(
            &mut t,
            TraceOp::Bcast {
                root: 0,
                bytes: state,
            },
        );
        let buckets = self.bucket_sizes();
        let ps = self.compute_ps();
        for _ in 0..self.steps {
            all(&mut t, TraceOp::Compute { ps });
            for &bytes in &buckets {
                all(&mut t, TraceOp::Allreduce { bytes });
            }
        }
        Ok(t)
    }
}
