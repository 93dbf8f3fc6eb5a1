//! Tensor shapes as recorded (`[8944, 1024]`) and NumPy/PyTorch broadcasting.

use std::fmt;

/// A tensor's sizes, outermost first. Sizes are non-negative by construction (the reader
/// refuses a negative one), so element counts need no sign checks; `[]` is a 0-dim tensor
/// (one element).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(Vec<u64>);

impl Shape {
    pub fn new(dims: Vec<u64>) -> Shape {
        Shape(dims)
    }

    pub fn dims(&self) -> &[u64] {
        &self.0
    }

    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The number of elements, `None` if it does not fit in 64 bits.
    pub fn numel(&self) -> Option<u64> {
        self.0.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// A `dim` argument as an index into [`dims`](Shape::dims), counted from the end when
    /// negative (`-1` is the last), as PyTorch reads it; `None` when out of range.
    pub fn axis(&self, dim: i64) -> Option<usize> {
        let rank = i64::try_from(self.0.len()).ok()?;
        let a = if dim < 0 { dim.checked_add(rank)? } else { dim };
        usize::try_from(a).ok().filter(|&a| a < self.0.len())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// The shape that `shapes` broadcast to, or `None` if they do not broadcast (two sizes of one
/// aligned dimension differ and neither is 1). Shapes are aligned at their last dimension; a
/// size of 1 stretches to the other's, and `0` against `1` is `0` (as in PyTorch: an empty
/// tensor stays empty).
pub fn broadcast<'a>(shapes: impl IntoIterator<Item = &'a Shape>) -> Option<Shape> {
    let mut out: Vec<u64> = Vec::new();
    for shape in shapes {
        let dims = shape.dims();
        if dims.len() > out.len() {
            let mut grown = vec![1; dims.len() - out.len()];
            grown.extend_from_slice(&out);
            out = grown;
        }
        let offset = out.len() - dims.len();
        for (o, &d) in out[offset..].iter_mut().zip(dims) {
            *o = match (*o, d) {
                (a, b) if a == b => a,
                (1, b) => b,
                (a, 1) => a,
                _ => return None,
            };
        }
    }
    Some(Shape(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(d: &[u64]) -> Shape {
        Shape::new(d.to_vec())
    }

    #[test]
    fn numel_and_dims() {
        assert_eq!(s(&[16, 559, 1024]).numel(), Some(9_158_656));
        assert_eq!(s(&[]).numel(), Some(1));
        assert_eq!(s(&[0, 5]).numel(), Some(0));
        assert_eq!(s(&[u64::MAX, 2]).numel(), None);
        assert_eq!(s(&[2, 3, 4]).axis(-1), Some(2));
        assert_eq!(s(&[2, 3, 4]).axis(0), Some(0));
        assert_eq!(s(&[2, 3, 4]).axis(3), None);
        assert_eq!(s(&[2, 3, 4]).axis(-4), None);
        assert_eq!(s(&[2, 3, 4]).axis(i64::MIN), None);
        assert_eq!(s(&[2, 3, 4]).to_string(), "[2, 3, 4]");
    }

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast([&s(&[16, 559, 1024]), &s(&[16, 559, 1])]), Some(s(&[16, 559, 1024])));
        assert_eq!(broadcast([&s(&[1024]), &s(&[16, 559, 1024])]), Some(s(&[16, 559, 1024])));
        assert_eq!(broadcast([&s(&[16, 16, 559, 64]), &s(&[1, 1, 559, 64])]), Some(s(&[16, 16, 559, 64])));
        assert_eq!(broadcast([&s(&[3]), &s(&[])]), Some(s(&[3])));
        assert_eq!(broadcast([&s(&[0]), &s(&[1])]), Some(s(&[0])));
        assert_eq!(broadcast([&s(&[2]), &s(&[3])]), None);
        assert_eq!(broadcast([]), Some(s(&[])));
    }
}
