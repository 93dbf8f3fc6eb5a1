//! How much a measured fusion helps, in four words.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The verdict on a measured speedup (unfused time / fused time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Speedup ≥ 1.5×.
    Strong,
    /// Speedup ≥ 1.1×.
    Moderate,
    /// Speedup ≥ 0.95×: within measurement noise of no change.
    Minimal,
    /// Below 0.95×: the fused kernel is slower than the separate ones.
    Slower,
}

impl Verdict {
    /// Lower bounds of each verdict but the last, best first.
    pub const THRESHOLDS: [(Verdict, f64); 3] =
        [(Verdict::Strong, 1.5), (Verdict::Moderate, 1.1), (Verdict::Minimal, 0.95)];

    /// The verdict for a speedup factor; anything not reaching 0.95 (NaN included) is slower.
    pub fn of_speedup(speedup: f64) -> Verdict {
        Self::THRESHOLDS.iter().find(|(_, min)| speedup >= *min).map_or(Verdict::Slower, |&(v, _)| v)
    }

    /// The machine id (`strong`, `moderate`, `minimal`, `slower`).
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Strong => "strong",
            Verdict::Moderate => "moderate",
            Verdict::Minimal => "minimal",
            Verdict::Slower => "slower",
        }
    }

    /// What a reader sees.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Slower => "fusion is slower",
            other => other.id(),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_inclusive_lower_bounds() {
        assert_eq!(Verdict::of_speedup(1.5), Verdict::Strong);
        assert_eq!(Verdict::of_speedup(1.4999), Verdict::Moderate);
        assert_eq!(Verdict::of_speedup(1.1), Verdict::Moderate);
        assert_eq!(Verdict::of_speedup(1.0999), Verdict::Minimal);
        assert_eq!(Verdict::of_speedup(0.95), Verdict::Minimal);
        assert_eq!(Verdict::of_speedup(0.9499), Verdict::Slower);
        assert_eq!(Verdict::of_speedup(f64::NAN), Verdict::Slower);
    }

    #[test]
    fn ids_and_text() {
        assert_eq!(serde_json::to_string(&Verdict::Slower).unwrap(), "\"slower\"");
        assert_eq!(Verdict::Slower.to_string(), "fusion is slower");
        assert_eq!(Verdict::Minimal.to_string(), "minimal");
    }
}
