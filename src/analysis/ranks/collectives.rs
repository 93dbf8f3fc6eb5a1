//! What a collective kernel is: its kind (from c10d's `Collective name`, else the kernel's
//! name), its message size in bytes, and the nccl-tests bandwidth formulas
//! (`docs/ranks.md`, "Bandwidth").

use serde::{Deserialize, Serialize};

/// The collective a kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    /// NCCL's point-to-point kernel (`ncclKernel_SendRecv_*`), which also carries all-to-all.
    SendRecv,
    Send,
    Recv,
    /// A communication kernel whose collective neither its args nor its name say
    /// (`ncclDevKernel_Generic_*` on ROCm without shapes).
    Other,
}

impl CollectiveKind {
    /// The kind from c10d's `Collective name` (`allreduce`, `_allgather_base`,
    /// `reduce_scatter_tensor_coalesced`, `all_to_all`, …) or a kernel name
    /// (`ncclKernel_AllReduce_RING_LL_Sum_float`, `cross_device_reduce_1stage<…>`).
    ///
    /// ```
    /// use fusionscope_analysis::ranks::collectives::CollectiveKind;
    /// assert_eq!(CollectiveKind::of_name("_allgather_base"), CollectiveKind::AllGather);
    /// assert_eq!(CollectiveKind::of_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"), CollectiveKind::SendRecv);
    /// assert_eq!(CollectiveKind::of_name("void cross_device_reduce_1stage<__nv_bfloat16>(...)"), CollectiveKind::AllReduce);
    /// assert_eq!(CollectiveKind::of_name("ncclDevKernel_Generic_2"), CollectiveKind::Other);
    /// ```
    pub fn of_name(name: &str) -> CollectiveKind {
        // Only the symbol (before its argument list) counts: `(ncclDevComm*, ...)` says nothing.
        let symbol = name.split('(').next().unwrap_or(name);
        let squashed: String =
            symbol.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
        const RULES: [(&str, CollectiveKind); 13] = [
            ("crossdevicereduce", CollectiveKind::AllReduce),
            ("customar", CollectiveKind::AllReduce),
            ("quickreduce", CollectiveKind::AllReduce),
            ("allreduce", CollectiveKind::AllReduce),
            ("allgather", CollectiveKind::AllGather),
            ("reducescatter", CollectiveKind::ReduceScatter),
            ("alltoall", CollectiveKind::AllToAll),
            ("broadcast", CollectiveKind::Broadcast),
            ("sendrecv", CollectiveKind::SendRecv),
            ("send", CollectiveKind::Send),
            ("recv", CollectiveKind::Recv),
            ("reduce", CollectiveKind::Reduce),
            ("bcast", CollectiveKind::Broadcast),
        ];
        RULES.iter().find(|(k, _)| squashed.contains(k)).map_or(CollectiveKind::Other, |r| r.1)
    }

    /// nccl-tests' bus-bandwidth factor for `n` ranks: busbw = algbw × factor. It turns the
    /// algorithm bandwidth into the per-link bandwidth an optimal algorithm needs, so figures of
    /// different collectives and rank counts compare with the hardware's link speed.
    /// `None` for [`CollectiveKind::Other`] and for `n == 0`.
    pub fn bus_factor(self, n: u32) -> Option<f64> {
        if n == 0 {
            return None;
        }
        let n = n as f64;
        match self {
            CollectiveKind::AllReduce => Some(2.0 * (n - 1.0) / n),
            CollectiveKind::AllGather | CollectiveKind::ReduceScatter | CollectiveKind::AllToAll => Some((n - 1.0) / n),
            CollectiveKind::Broadcast
            | CollectiveKind::Reduce
            | CollectiveKind::SendRecv
            | CollectiveKind::Send
            | CollectiveKind::Recv => Some(1.0),
            CollectiveKind::Other => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all_reduce",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::ReduceScatter => "reduce_scatter",
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::SendRecv => "send_recv",
            CollectiveKind::Send => "send",
            CollectiveKind::Recv => "recv",
            CollectiveKind::Other => "other",
        }
    }
}

/// Bytes of one element of c10d's `dtype` names (`Float`, `BFloat16`, `Long`, …; any case);
/// `None` for a name it does not know.
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    let d = dtype.trim().to_ascii_lowercase();
    let d = d.strip_prefix("torch.").unwrap_or(&d);
    Some(match d {
        "bool" | "byte" | "char" | "uint8" | "int8" => 1,
        _ if d.starts_with("float8") => 1,
        "half" | "bfloat16" | "short" | "float16" | "int16" | "uint16" => 2,
        "float" | "int" | "float32" | "int32" | "uint32" | "complexhalf" => 4,
        "double" | "long" | "float64" | "int64" | "uint64" | "complexfloat" => 8,
        "complexdouble" => 16,
        _ => return None,
    })
}

/// A collective's message size as nccl-tests counts it: the larger of its input and output
/// (all-gather: the gathered output; reduce-scatter: the input being scattered; all-reduce,
/// broadcast, all-to-all: either), in elements × the element size. `None` when the trace does
/// not record the counts or the type, or the product overflows.
pub fn message_bytes(in_nelems: Option<u64>, out_nelems: Option<u64>, dtype: Option<&str>) -> Option<u64> {
    let n = match (in_nelems, out_nelems) {
        (Some(a), Some(b)) => a.max(b),
        (a, b) => a.or(b)?,
    };
    n.checked_mul(dtype_bytes(dtype?)?)
}

/// Algorithm bandwidth, GB/s (10⁹ bytes per second): bytes over the time, as nccl-tests.
/// `None` without bytes or for a non-positive time.
pub fn algbw_gbps(bytes: Option<u64>, time_us: f64) -> Option<f64> {
    let bytes = bytes?;
    (time_us > 0.0 && time_us.is_finite()).then(|| bytes as f64 / (time_us * 1e3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_the_real_names() {
        let k = CollectiveKind::of_name;
        assert_eq!(k("allreduce"), CollectiveKind::AllReduce);
        assert_eq!(k("broadcast"), CollectiveKind::Broadcast);
        assert_eq!(k("reduce_scatter_tensor_coalesced"), CollectiveKind::ReduceScatter);
        assert_eq!(k("alltoall_base"), CollectiveKind::AllToAll);
        assert_eq!(
            k("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveKind::AllReduce
        );
        assert_eq!(
            k("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveKind::Broadcast
        );
        assert_eq!(k("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), CollectiveKind::ReduceScatter);
        assert_eq!(k("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), CollectiveKind::AllGather);
        assert_eq!(k("multimem_all_reduce_kernel"), CollectiveKind::AllReduce);
        assert_eq!(k("recv"), CollectiveKind::Recv);
        assert_eq!(k("reduce"), CollectiveKind::Reduce);
    }

    #[test]
    fn nccl_tests_factors_and_bandwidth() {
        // nccl-tests (doc/PERFORMANCE.md): all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n.
        assert_eq!(CollectiveKind::AllReduce.bus_factor(8), Some(1.75));
        assert_eq!(CollectiveKind::AllGather.bus_factor(4), Some(0.75));
        assert_eq!(CollectiveKind::AllToAll.bus_factor(2), Some(0.5));
        assert_eq!(CollectiveKind::Broadcast.bus_factor(8), Some(1.0));
        assert_eq!(CollectiveKind::Other.bus_factor(8), None);
        assert_eq!(CollectiveKind::AllReduce.bus_factor(0), None);
        // 6,637,568 floats (the A100 trace's 4th all-reduce) in 2,636.669 µs.
        let bytes = message_bytes(Some(6_637_568), Some(6_637_568), Some("Float"));
        assert_eq!(bytes, Some(26_550_272));
        let alg = algbw_gbps(bytes, 2636.669).unwrap();
        assert!((alg - 10.0696).abs() < 1e-3, "{alg}");
        assert_eq!(algbw_gbps(bytes, 0.0), None);
        assert_eq!(message_bytes(Some(u64::MAX), None, Some("Double")), None);
        assert_eq!(message_bytes(Some(4), Some(16), Some("BFloat16")), Some(32));
        assert_eq!(message_bytes(Some(4), None, Some("Quaternion")), None);
    }
}
