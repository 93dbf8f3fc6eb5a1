//! Nova's bump allocator: where each tensor of a trace lives.
//!
//! Starting at 5 TiB (`0x50000000000`), each tensor id, the first time it is seen (within a
//! record: operands before results, left to right, lists and keywords included), gets
//! `product(shape) × bytes per element` bytes, unaligned; later sightings reuse the address.
//! A 0-d tensor has one element.
//!
//! The size comes from the first sighting that has a type. Results may be written without
//! one; such a tensor is placed at its first sighting all the same, sized from its first typed
//! use. What could not be sized exactly is reported as a [`Warning`], never silently:
//! an unknown dtype counts 1 byte per element, a tensor never given a type takes 0 bytes.

use std::collections::HashMap;

use serde::Serialize;

use super::parse::{OpTrace, TensorRef, TensorType};

/// Where Nova's allocator starts: 5 TiB.
pub const BASE_ADDRESS: u64 = 5 << 40;

/// Something the reader had to assume, with the line it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    pub line: usize,
    pub message: String,
}

/// What is known of one tensor id across the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub id: u64,
    /// Line of the first sighting.
    pub first_line: usize,
    /// The type at the first sighting that has one.
    pub ty: Option<TensorType>,
    pub size_bytes: u64,
    pub address: u64,
}

/// Every tensor id of a trace with its size and address.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TensorTable {
    infos: Vec<TensorInfo>,
    index: HashMap<u64, usize>,
}

impl TensorTable {
    /// Walks the trace in allocation order and places every tensor.
    pub fn build(trace: &OpTrace) -> (TensorTable, Vec<Warning>) {
        let mut table = TensorTable::default();
        for record in &trace.records {
            let operands = record.operand_tensors();
            for t in operands.into_iter().chain(record.results.iter()) {
                table.see(t, record.line);
            }
        }
        let warnings = table.place();
        (table, warnings)
    }

    fn see(&mut self, t: &TensorRef, line: usize) {
        match self.index.get(&t.id) {
            Some(&i) => {
                let info = &mut self.infos[i];
                if info.ty.is_none() {
                    info.ty = t.ty.clone();
                }
            }
            None => {
                self.index.insert(t.id, self.infos.len());
                self.infos.push(TensorInfo { id: t.id, first_line: line, ty: t.ty.clone(), size_bytes: 0, address: 0 });
            }
        }
    }

    /// Sizes and addresses, in first-sighting order.
    fn place(&mut self) -> Vec<Warning> {
        let mut warnings = Vec::new();
        let mut next = BASE_ADDRESS;
        for info in &mut self.infos {
            info.size_bytes = match &info.ty {
                None => {
                    warnings.push(Warning {
                        line: info.first_line,
                        message: format!("tensor %{} never has a type: its size is taken as 0 bytes", info.id),
                    });
                    0
                }
                Some(ty) => {
                    let bpe = ty.dtype.bytes_per_element().unwrap_or_else(|| {
                        warnings.push(Warning {
                            line: info.first_line,
                            message: format!(
                                "tensor %{} has dtype \"{}\" of unknown size: 1 byte per element assumed",
                                info.id, ty.dtype
                            ),
                        });
                        1
                    });
                    ty.shape.iter().try_fold(bpe, |acc, &d| acc.checked_mul(d)).unwrap_or_else(|| {
                        warnings.push(Warning {
                            line: info.first_line,
                            message: format!("tensor %{} is larger than 2^64 bytes: its size is capped", info.id),
                        });
                        u64::MAX
                    })
                }
            };
            info.address = next;
            next = next.saturating_add(info.size_bytes);
        }
        warnings
    }

    pub fn get(&self, id: u64) -> Option<&TensorInfo> {
        self.index.get(&id).map(|&i| &self.infos[i])
    }

    /// The address of a tensor id seen in the trace (0 for an id never seen, which cannot
    /// happen for ids taken from the same trace).
    pub fn address(&self, id: u64) -> u64 {
        self.get(id).map_or(0, |i| i.address)
    }

    /// All tensors in first-sighting (allocation) order.
    pub fn iter(&self) -> impl Iterator<Item = &TensorInfo> {
        self.infos.iter()
    }
}

/// `0x50000000000`: how Nova prints an address.
pub fn hex(address: u64) -> String {
    format!("{address:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_optrace;

    #[test]
    fn operands_before_results_reuse_on_later_sightings() {
        let trace = parse_optrace(
            "0:0:0 %2:<4xf16> = a.b.add(%0:<f32>, %1:<2x3xi8>)\n0:0:0 %3:<4xf16> = a.b.gelu(%2:<4xf16>, %0:<f32>)\n",
        )
        .unwrap();
        let (table, warnings) = TensorTable::build(&trace);
        assert!(warnings.is_empty());
        assert_eq!(table.address(0), BASE_ADDRESS);
        assert_eq!(table.address(1), BASE_ADDRESS + 4);
        assert_eq!(table.address(2), BASE_ADDRESS + 4 + 6);
        assert_eq!(table.address(3), BASE_ADDRESS + 4 + 6 + 8);
        assert_eq!(hex(BASE_ADDRESS), "0x50000000000");
    }

    #[test]
    fn untyped_results_take_their_first_typed_use_and_unknowns_are_reported() {
        let trace = parse_optrace(
            "0:0:0 %5 = a.b.op(%1:<2xunknown>)\n0:0:0 %6 = a.b.op(%5:<8xf32>)\n0:0:0 %7 = a.b.op(%6:<1xf16>, %9:<3x0xf16>)\n",
        )
        .unwrap();
        let (table, warnings) = TensorTable::build(&trace);
        assert_eq!(table.get(1).unwrap().size_bytes, 2);
        assert_eq!(table.get(5).unwrap().size_bytes, 32);
        assert_eq!(table.get(9).unwrap().size_bytes, 0);
        assert_eq!(table.address(5), BASE_ADDRESS + 2);
        assert_eq!(table.get(7).unwrap().ty, None);
        let lines: Vec<usize> = warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [1, 3]);
        assert!(warnings[0].message.contains("\"unknown\""));
        assert!(warnings[1].message.contains("%7 never has a type"));
    }
}
