//! Synthetic multi-rank jobs with planted figures, for tests and the benchmark
//! (`docs/ranks.md`, "Synthetic jobs"): every figure the job report gives follows from the
//! plan by the formulas in [`SyntheticJob`]'s docs, so tests assert exact values.
//!
//! Each step, every rank runs `kernels_per_step` compute kernels back to back from the step's
//! start, taking `compute_us + extra_us[rank]` in all, then an all-reduce (group `"0"`). The
//! all-reduce ends for everyone `transfer_us` after the last rank arrives; 10 µs later all
//! ranks run an all-gather (group `"1"`, arriving together) of `gather_us`; the next step
//! starts `gap_us` after it. Each rank writes its times on its own clock, `offsets_us[rank]`
//! ahead of the true time. The benchmark's jobs ([`SyntheticJob::sized`]) also write each
//! kernel's launch call, 20 µs before it, as a real rank's trace does. Writes to any
//! [`std::io::Write`] (no file-system code).

use std::io::Write;

/// A planned job. The planted figures, per all-reduce: skew = max(extra) − min(extra); rank
/// r waits `max(extra) − extra[r]`; duration = `transfer_us`; algbw = `allreduce_bytes` /
/// `transfer_us`. The straggler (the rank of largest extra) causes `Σ_r (max − extra[r])` per
/// step. Rank r's clock offset against rank 0 is `offsets_us[r] − offsets_us[0]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticJob {
    pub world_size: u32,
    pub steps: usize,
    pub kernels_per_step: usize,
    pub compute_us: u64,
    /// Extra compute each rank does per step (the planted skew).
    pub extra_us: Vec<u64>,
    /// Each rank's clock ahead of true time.
    pub offsets_us: Vec<u64>,
    /// The rank with the most extra compute.
    pub straggler: u32,
    pub transfer_us: u64,
    pub gather_us: u64,
    pub gap_us: u64,
    /// bf16 elements of each all-reduce (2 bytes each) and of each all-gather's output.
    pub allreduce_nelems: u64,
    pub allgather_nelems: u64,
    /// True time of the first step, µs.
    pub start_us: u64,
    /// A collective left out of one rank's trace: (rank, step) of an all-reduce.
    pub drop_allreduce: Option<(u32, usize)>,
    /// Each kernel's launch call, this long before the kernel starts, as a real rank's trace
    /// records one per kernel (the benchmark's jobs: reading them matches each call to its
    /// kernel); `None` writes kernels alone.
    pub launch_lead_us: Option<u64>,
}

/// The element type the synthetic collectives carry (2 bytes).
pub const DTYPE: &str = "BFloat16";
const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
const ALLREDUCE: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
/// JSON bytes a [`SyntheticJob::sized`] job writes per compute kernel with its launch call.
const BYTES_PER_KERNEL: u64 = 455;
const ALLGATHER: &str = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

impl SyntheticJob {
    /// Four ranks, three steps; rank 2 straggles by 400 µs; rank 3's clock is 2.5 s ahead.
    pub fn small() -> Self {
        SyntheticJob {
            world_size: 4,
            steps: 3,
            kernels_per_step: 4,
            compute_us: 1000,
            extra_us: vec![0, 30, 400, 10],
            offsets_us: vec![0, 120, 40, 2_500_000],
            straggler: 2,
            transfer_us: 500,
            gather_us: 200,
            gap_us: 100,
            allreduce_nelems: 25_000_000,
            allgather_nelems: 4_000_000,
            start_us: 1_700_000_000_000,
            drop_allreduce: None,
            launch_lead_us: None,
        }
    }

    /// `world_size` ranks of about `bytes_per_rank` bytes of JSON each (for the benchmark):
    /// 1,000 compute kernels a step, the last rank straggling.
    pub fn sized(world_size: u32, bytes_per_rank: u64) -> Self {
        let world = world_size.max(2);
        // About BYTES_PER_KERNEL per compute kernel with its launch call (measured), 1,000 a
        // step.
        let steps = (bytes_per_rank / (BYTES_PER_KERNEL * 1000)).max(1) as usize;
        SyntheticJob {
            world_size: world,
            steps,
            kernels_per_step: 1000,
            compute_us: 10_000,
            extra_us: (0..world).map(|r| if r + 1 == world { 1000 } else { u64::from(r % 4) * 10 }).collect(),
            offsets_us: (0..world).map(|r| u64::from(r) * 1000).collect(),
            straggler: world - 1,
            transfer_us: 800,
            gather_us: 300,
            gap_us: 50,
            allreduce_nelems: 50_000_000,
            allgather_nelems: 8_000_000,
            start_us: 1_700_000_000_000,
            drop_allreduce: None,
            launch_lead_us: Some(20),
        }
    }

    fn max_extra(&self) -> u64 {
        self.extra_us.iter().copied().max().unwrap_or(0)
    }

    /// True start of step `s`.
    pub fn step_start(&self, s: usize) -> u64 {
        let step = self.compute_us + self.max_extra() + self.transfer_us + 10 + self.gather_us + self.gap_us;
        self.start_us + s as u64 * step
    }

    /// Rank `rank`'s trace as JSON text.
    pub fn rank_trace(&self, rank: u32) -> String {
        let mut out = Vec::new();
        self.write_rank(rank, &mut out).expect("writing to a Vec");
        String::from_utf8(out).expect("the generator writes UTF-8")
    }

    /// Writes rank `rank`'s trace; returns the bytes written.
    pub fn write_rank(&self, rank: u32, out: &mut impl Write) -> std::io::Result<u64> {
        let mut w = Counting { inner: out, bytes: 0 };
        let r = rank as usize;
        let device = rank % 8;
        let members: Vec<String> = (0..self.world_size).map(|x| x.to_string()).collect();
        let members = members.join(", ");
        write!(
            w,
            r#"{{"schemaVersion": 1, "distributedInfo": {{"backend": "nccl", "rank": {rank}, "world_size": {ws}, "pg_count": 2, "pg_config": [{{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": {ws}, "ranks": [{members}]}}, {{"pg_name": "1", "pg_desc": "dp_shard", "backend_config": "cuda:nccl", "pg_size": {ws}, "ranks": [{members}]}}]}}, "deviceProperties": [{{"id": {device}, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0, "warpSize": 32, "numSms": 132}}], "cupti_version": 24, "traceEvents": ["#,
            ws = self.world_size
        )?;
        let offset = self.offsets_us.get(r).copied().unwrap_or(0);
        let extra = self.extra_us.get(r).copied().unwrap_or(0);
        let per_kernel = (self.compute_us + extra) as f64 / self.kernels_per_step.max(1) as f64;
        let mut corr = 1u64;
        let mut first = true;
        for s in 0..self.steps {
            let t = self.step_start(s);
            for k in 0..self.kernels_per_step {
                let ts = (t + offset) as f64 + k as f64 * per_kernel;
                self.launch(&mut w, &mut first, ts, corr)?;
                sep(&mut w, &mut first)?;
                write!(
                    w,
                    r#"{{"ph": "X", "cat": "kernel", "name": "{GEMM}", "pid": {device}, "tid": 7, "ts": {ts:.3}, "dur": {per_kernel:.3}, "args": {{"device": {device}, "stream": 7, "correlation": {corr}}}}}"#
                )?;
                corr += 1;
            }
            let arrive = t + self.compute_us + extra + offset;
            let end = t + self.compute_us + self.max_extra() + self.transfer_us + offset;
            if self.drop_allreduce != Some((rank, s)) {
                self.launch(&mut w, &mut first, arrive as f64, corr)?;
                sep(&mut w, &mut first)?;
                self.collective(
                    &mut w,
                    ALLREDUCE,
                    "allreduce",
                    "0",
                    "default_pg",
                    &members,
                    device,
                    arrive,
                    end,
                    corr,
                    self.allreduce_nelems,
                    self.allreduce_nelems,
                )?;
                corr += 1;
            }
            let g = end + 10;
            self.launch(&mut w, &mut first, g as f64, corr)?;
            sep(&mut w, &mut first)?;
            let n = self.allgather_nelems;
            let per = n / u64::from(self.world_size.max(1));
            self.collective(
                &mut w,
                ALLGATHER,
                "_allgather_base",
                "1",
                "dp_shard",
                &members,
                device,
                g,
                g + self.gather_us,
                corr,
                per,
                n,
            )?;
            corr += 1;
        }
        write!(w, "]}}")?;
        Ok(w.bytes)
    }

    /// The launch call of the kernel `corr` starting at `kernel_ts`, where the job has them.
    fn launch(&self, w: &mut impl Write, first: &mut bool, kernel_ts: f64, corr: u64) -> std::io::Result<()> {
        let Some(lead) = self.launch_lead_us else { return Ok(()) };
        sep(w, first)?;
        write!(
            w,
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, "ts": {ts:.3}, "dur": 4.000, "args": {{"cbid": 211, "correlation": {corr}}}}}"#,
            ts = kernel_ts - lead as f64
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn collective(
        &self,
        w: &mut impl Write,
        name: &str,
        collective: &str,
        group: &str,
        desc: &str,
        members: &str,
        device: u32,
        start: u64,
        end: u64,
        corr: u64,
        in_nelems: u64,
        out_nelems: u64,
    ) -> std::io::Result<()> {
        write!(
            w,
            r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": {device}, "tid": 21, "ts": {start}, "dur": {dur}, "args": {{"device": {device}, "stream": 21, "correlation": {corr}, "Collective name": "{collective}", "In msg nelems": {in_nelems}, "Out msg nelems": {out_nelems}, "Group size": {ws}, "dtype": "{DTYPE}", "In split size": "[]", "Out split size": "[]", "Process Group Name": "{group}", "Process Group Description": "{desc}", "Process Group Ranks": "[{members}]"}}}}"#,
            dur = end - start,
            ws = self.world_size
        )
    }
}

fn sep(w: &mut impl Write, first: &mut bool) -> std::io::Result<()> {
    if !std::mem::take(first) {
        w.write_all(b", ")?;
    }
    Ok(())
}

/// Counts the bytes written through it.
struct Counting<'w, W: Write> {
    inner: &'w mut W,
    bytes: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
