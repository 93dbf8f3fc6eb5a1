//! Which two of several opened traces to compare first: the page lets the user pick any two,
//! and starts from the pair an AMD-vs-NVIDIA comparison is usually about.

use trace::Vendor;

/// The default pair (indices into `vendors`, in the order the traces were opened, earlier
/// first) among traces whose vendors are `vendors`, opened in that order:
/// the latest NVIDIA trace and the latest AMD trace when both vendors are present (the
/// comparison is about the two vendors), otherwise the last two opened. `None` for fewer than
/// two traces.
pub fn default_pair(vendors: &[Vendor]) -> Option<(usize, usize)> {
    let n = vendors.len();
    if n < 2 {
        return None;
    }
    let latest = |v: Vendor| vendors.iter().rposition(|&x| x == v);
    match (latest(Vendor::Nvidia), latest(Vendor::Amd)) {
        (Some(nv), Some(amd)) => Some((nv.min(amd), nv.max(amd))),
        _ => Some((n - 2, n - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Vendor::{Amd, Nvidia, Unknown};

    #[test]
    fn two_traces_are_the_pair_whatever_their_vendors() {
        assert_eq!(default_pair(&[Nvidia, Nvidia]), Some((0, 1)));
        assert_eq!(default_pair(&[Amd, Nvidia]), Some((0, 1)));
        assert_eq!(default_pair(&[Unknown]), None);
        assert_eq!(default_pair(&[]), None);
    }

    #[test]
    fn an_nvidia_and_an_amd_trace_are_preferred_the_latest_of_each() {
        assert_eq!(default_pair(&[Nvidia, Amd, Nvidia]), Some((1, 2)));
        assert_eq!(default_pair(&[Amd, Nvidia, Nvidia, Unknown]), Some((0, 2)));
        assert_eq!(default_pair(&[Nvidia, Unknown, Unknown]), Some((1, 2)));
    }
}
