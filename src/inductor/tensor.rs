//! A node's type as an FX graph prints it: `f32[16, 10][10, 1]cuda:0` — element type, sizes,
//! strides, device. Sizes may be symbols (`s0`, `2*s0`) when the graph was compiled for dynamic
//! shapes; such a tensor has no byte count.

use serde::Serialize;

/// One tensor's type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tensor {
    /// The element type as FX writes it (`f32`, `bf16`, `b8`).
    pub dtype: String,
    /// Sizes; `None` for a symbolic size.
    pub sizes: Vec<Option<u64>>,
    /// Strides, where printed; `None` for a symbolic stride.
    pub strides: Option<Vec<Option<u64>>>,
    pub device: String,
    /// The text as printed, sizes only (`f32[16, 10]`), for tables.
    pub text: String,
}

impl Tensor {
    /// Parses an annotation; `None` when it is not a tensor's (`Sym(s0)`, an opaque object).
    pub fn parse(annotation: &str) -> Option<Tensor> {
        let open = annotation.find('[')?;
        let dtype = &annotation[..open];
        if dtype.is_empty() || !dtype.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        let (sizes_text, rest) = bracketed(&annotation[open..])?;
        let (strides, device) = match rest.starts_with('[') {
            true => {
                let (strides_text, device) = bracketed(rest)?;
                (Some(dims(strides_text)), device)
            }
            false => (None, rest),
        };
        Some(Tensor {
            dtype: dtype.to_string(),
            sizes: dims(sizes_text),
            strides,
            device: device.to_string(),
            text: format!("{dtype}[{sizes_text}]"),
        })
    }

    /// Bytes of the memory the tensor spans: from its first element to its last, through its
    /// strides (a broadcast view spans its base, not its size), times the element's size.
    /// `None` for a symbolic size, an unknown element type, or a count past 64 bits.
    pub fn bytes(&self) -> Option<u64> {
        let element = element_bytes(&self.dtype)?;
        let sizes: Vec<u64> = self.sizes.iter().copied().collect::<Option<_>>()?;
        if sizes.contains(&0) {
            return Some(0);
        }
        let span = match &self.strides {
            Some(strides) if strides.len() == sizes.len() => {
                let mut last = 0u64;
                for (size, stride) in sizes.iter().zip(strides) {
                    last = last.checked_add((size - 1).checked_mul((*stride)?)?)?;
                }
                last.checked_add(1)?
            }
            _ => sizes.iter().try_fold(1u64, |n, s| n.checked_mul(*s))?,
        };
        span.checked_mul(element)
    }
}

/// The text inside the brackets at the start of `s`, and what follows them.
fn bracketed(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('[')?;
    let close = s.find(']')?;
    Some((&s[..close], &s[close + 1..]))
}

fn dims(text: &str) -> Vec<Option<u64>> {
    text.split(',').map(str::trim).filter(|d| !d.is_empty()).map(|d| d.parse().ok()).collect()
}

/// Bytes of one element of an FX element type (torch's short names).
pub fn element_bytes(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "f64" | "i64" | "u64" | "c64" => 8,
        "c128" => 16,
        "f32" | "i32" | "u32" | "c32" => 4,
        "f16" | "bf16" | "i16" | "u16" => 2,
        "i8" | "u8" | "b8" => 1,
        d if d.starts_with("f8") || d.starts_with("f4") => 1,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contiguous_tensor_spans_its_elements() {
        let t = Tensor::parse("f32[16, 10][10, 1]cuda:0").unwrap();
        assert_eq!(t.text, "f32[16, 10]");
        assert_eq!(t.device, "cuda:0");
        assert_eq!(t.bytes(), Some(640));
    }

    #[test]
    fn views_span_their_memory_not_their_size() {
        // A transposed weight spans the weight.
        assert_eq!(Tensor::parse("f32[10, 16][1, 10]cuda:0").unwrap().bytes(), Some(640));
        // A broadcast over the first dimension spans one row.
        assert_eq!(Tensor::parse("bf16[8, 4096][0, 1]cuda:0").unwrap().bytes(), Some(8192));
        assert_eq!(Tensor::parse("f32[][]cpu").unwrap().bytes(), Some(4));
        assert_eq!(Tensor::parse("f32[0, 5][5, 1]cpu").unwrap().bytes(), Some(0));
    }

    #[test]
    fn symbols_overflow_and_non_tensors_have_no_bytes() {
        assert_eq!(Tensor::parse("f32[s0, 10][10, 1]cuda:0").unwrap().bytes(), None);
        let huge = Tensor::parse("f64[4294967296, 4294967296][4294967296, 1]cpu").unwrap();
        assert_eq!(huge.bytes(), None);
        assert!(Tensor::parse("Sym(s0)").is_none());
        assert_eq!(Tensor::parse("q9[2]cpu").unwrap().bytes(), None);
    }
}
