//! Two sinks fed by one reading: a whole trace and a fold of it, or two folds, without reading
//! the file twice (the export keeps the trace for its analyses and folds the rank's
//! collectives as the ranks view does).

use super::{EventSink, TraceHeader};
use crate::compiled::CompiledGroup;
use crate::intern::{NameId, NameTable};
use crate::{Annotation, CollectiveArgs, CpuOp, Kernel, Launch, Transfer};

/// Hands every event to both sinks; each gets only what it asks for ([`EventSink::CPU_SIDE`],
/// [`EventSink::LAUNCHES`]), and the reader reads what either asks for.
pub struct Both<A, B>(pub A, pub B);

impl<A: EventSink, B: EventSink> EventSink for Both<A, B> {
    type Output = (A::Output, B::Output);
    const CPU_SIDE: bool = A::CPU_SIDE || B::CPU_SIDE;
    const LAUNCHES: bool = A::LAUNCHES || B::LAUNCHES;

    fn kernel(&mut self, names: &NameTable, kernel: Kernel) {
        self.0.kernel(names, kernel);
        self.1.kernel(names, kernel);
    }
    fn collective_kernel(&mut self, names: &NameTable, kernel: Kernel, args: &CollectiveArgs<'_>) {
        self.0.collective_kernel(names, kernel, args);
        self.1.collective_kernel(names, kernel, args);
    }
    fn transfer(&mut self, names: &NameTable, transfer: Transfer) {
        self.0.transfer(names, transfer);
        self.1.transfer(names, transfer);
    }
    fn cpu_op(&mut self, op: CpuOp) {
        if A::CPU_SIDE {
            self.0.cpu_op(op);
        }
        if B::CPU_SIDE {
            self.1.cpu_op(op);
        }
    }
    fn annotation(&mut self, annotation: Annotation) {
        if A::CPU_SIDE {
            self.0.annotation(annotation);
        }
        if B::CPU_SIDE {
            self.1.annotation(annotation);
        }
    }
    fn launch(&mut self, correlation: u64, launch: Launch) {
        if A::LAUNCHES {
            self.0.launch(correlation, launch);
        }
        if B::LAUNCHES {
            self.1.launch(correlation, launch);
        }
    }
    fn compiled_name(&mut self, names: &NameTable, name: NameId, group: &CompiledGroup) {
        self.0.compiled_name(names, name, group);
        self.1.compiled_name(names, name, group);
    }
    fn finish(self, header: TraceHeader) -> Self::Output {
        (self.0.finish(header.clone()), self.1.finish(header))
    }
}
