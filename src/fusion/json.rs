//! The graph file format (JSON): reading with positions in every error, and writing back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::{GraphError, Location};
use super::graph::{GraphBuilder, OpGraph, OpType};

mod locate;
use locate::{locate, location, strip_position};

/// One op as written in the file. Numbers are signed so that a negative dimension or element
/// size is reported as such rather than as a type error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileOp {
    pub name: String,
    pub op_type: String,
    #[serde(default)]
    pub inputs: Vec<String>,
    pub output: String,
    pub shape: Vec<i64>,
    pub bytes_per_element: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileTensor {
    pub shape: Vec<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_element: Option<i64>,
}

/// The object form of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphFile {
    pub ops: Vec<FileOp>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tensors: BTreeMap<String, FileTensor>,
}

use borrowed::FileOp as OpRef;

/// The file read in place: names borrow the file's text (they are copied only when they hold
/// an escape). The types are named as the owned ones, which serde's messages name
/// (`expected struct FileOp`).
mod borrowed;

/// What [`build`] reads of an op, whichever way the file was read.
trait OpFields {
    fn name(&self) -> &str;
    fn op_type(&self) -> &str;
    fn inputs(&self) -> impl Iterator<Item = &str>;
    fn output(&self) -> &str;
    fn shape(&self) -> &[i64];
    fn bytes_per_element(&self) -> i64;
}

impl OpFields for FileOp {
    fn name(&self) -> &str {
        &self.name
    }
    fn op_type(&self) -> &str {
        &self.op_type
    }
    fn inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs.iter().map(String::as_str)
    }
    fn output(&self) -> &str {
        &self.output
    }
    fn shape(&self) -> &[i64] {
        &self.shape
    }
    fn bytes_per_element(&self) -> i64 {
        self.bytes_per_element
    }
}

impl OpFields for OpRef<'_> {
    fn name(&self) -> &str {
        &self.name
    }
    fn op_type(&self) -> &str {
        &self.op_type
    }
    fn inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs.as_slice().iter().map(|n| &*n.0)
    }
    fn output(&self) -> &str {
        &self.output
    }
    fn shape(&self) -> &[i64] {
        self.shape.as_slice()
    }
    fn bytes_per_element(&self) -> i64 {
        self.bytes_per_element
    }
}

/// Parses and validates a graph file (object with `ops` and optional `tensors`, or a bare
/// array of ops).
///
/// The ops are read in place (`OpRef`: names borrowed from `text`) and added to the graph
/// one by one as they are read, so that no list of a million parsed ops is ever held; positions
/// for an error message are looked for only once there is an error to place. What is reported
/// is what reading the whole file and then building it would report: the first JSON fault in
/// the text, else the first declared tensor at fault (by name), else the first op (in file
/// order), else a cycle or an overflow.
///
/// Graph files come from strangers; what bounds the work on one:
/// - **Depth.** serde_json refuses to recurse past 128 levels (its default recursion limit,
///   kept on), and the format's own types nest 3 deep (`{"ops": [{"shape": [1]}]}`), so an array
///   where an op, a name or a dimension belongs is a type error long before that. The value of
///   an unknown key is skipped by serde_json without recursion (a heap stack), and so is any
///   value by the position scanner (`locate`): a file nested 100,000 deep costs one pass.
/// - **Size.** Everything after serde_json is linear in the file: the scanner reads it once,
///   op and tensor names are found through a hash table ([`GraphBuilder`]), grouping is linear in
///   the op inputs however many candidate groups an op has, and a line and column are worked
///   out only for the one error reported. So no budget beyond the file's size is set: time
///   and memory grow with it, as `fusionscope bench fusion` measures up to a million ops.
pub fn parse_graph(text: &str) -> Result<OpGraph, GraphError> {
    // Op objects are 80 bytes at the very least; real files spend more on each.
    let capacity = text.len() / 100;
    let object = match text.trim_start().as_bytes().first() {
        Some(b'[') => false,
        Some(b'{') => true,
        _ => return Err(malformed(text)),
    };
    // The tensors are declared before any op is added (so their errors come first, and they
    // are numbered first) but may follow the ops in the file: they are read first, the ops
    // skipped, then the ops streamed. A file without the word needs no first reading (unless
    // the key is written with escapes, which the second reading notices).
    let mut declared = None;
    if object && memchr::memmem::find(text.as_bytes(), b"tensors").is_some() {
        declared = Some(serde_json::from_str::<TensorsFirst>(text).map_err(|_| malformed(text))?);
    }
    let built = loop {
        let tensors = declared.iter().flat_map(|d| d.tensors.iter().map(|(name, t)| (&*name.0, t)));
        let mut loader = Loader::new(capacity, tensors);
        let saw_tensors = read_all_ops(text, object, &mut loader).map_err(|_| malformed(text))?;
        if saw_tensors && declared.is_none() {
            declared = Some(serde_json::from_str::<TensorsFirst>(text).map_err(|_| malformed(text))?);
            continue;
        }
        break loader.finish();
    };
    built.map_err(|failure| match failure {
        Failure::Graph(e) => e,
        Failure::At(e, spot) => {
            let spots = locate(text);
            let offset = match spot {
                Spot::Op(i) => spots.ops.get(i).copied(),
                Spot::Tensor(name) => spots.tensors.get(&name).copied(),
            };
            match offset {
                Some(o) => e.at(location(text, o)),
                None => e,
            }
        }
    })
}

/// The error of a file [`parse_graph`]'s readings found malformed (or that is neither an object
/// nor an array): the one reading it whole reports, so that the message and position are
/// those of the first fault in the text, whichever reading met which fault.
fn malformed(text: &str) -> GraphError {
    match parse_file(text) {
        Err(e) => e,
        // Unreachable: each reading checks less than the whole one.
        Ok(_) => GraphError::NotAGraph { at: super::error::At(None) },
    }
}

/// The object form with its ops skipped (checked as JSON only): the first of
/// [`parse_graph`]'s two readings.
#[derive(Deserialize)]
struct TensorsFirst<'a> {
    #[allow(dead_code)]
    ops: serde::de::IgnoredAny,
    #[serde(default, borrow)]
    tensors: BTreeMap<borrowed::Name<'a>, FileTensor>,
}

/// Reads `text` (an object when `object`, else a bare array) into `loader`: on this thread, or,
/// for a large file natively, on another thread while this one builds ([`read_ops_beside`]).
/// Returns whether the object has a `tensors` key.
fn read_all_ops(text: &str, object: bool, loader: &mut Loader) -> Result<bool, serde_json::Error> {
    #[cfg(not(target_arch = "wasm32"))]
    if text.len() >= PIPELINE_BYTES {
        return read_ops_beside(text, object, loader);
    }
    read_ops(text, object, Target::Loader(loader))
}

/// Reads `text`, handing each op to `target` as it is read. Returns whether the object has a
/// `tensors` key.
fn read_ops<'a>(text: &'a str, object: bool, target: Target<'_, 'a>) -> Result<bool, serde_json::Error> {
    use serde::de::{DeserializeSeed, Deserializer as _};
    let mut de = serde_json::Deserializer::from_str(text);
    let tensors = if object {
        (&mut de).deserialize_struct("GraphFile", &["ops", "tensors"], Object(target))?
    } else {
        Ops(target).deserialize(&mut de)?;
        false
    };
    de.end()?;
    Ok(tensors)
}

/// Files at least this long are read on two threads ([`read_ops_beside`]).
#[cfg(not(target_arch = "wasm32"))]
const PIPELINE_BYTES: usize = 1 << 20;

/// Ops a reading thread hands the building thread at a time.
#[cfg(not(target_arch = "wasm32"))]
const HANDOFF: usize = 16 * BATCH;

/// Reads the ops on another thread while this one adds them to the graph, batch after batch:
/// on a large file each is about half the work. The ops arrive in file order, so the result and
/// the first error reported are one thread's. The graph is built (and so allocated) on the
/// calling thread, where it will be used and freed. (Not in wasm, which has no threads.)
#[cfg(not(target_arch = "wasm32"))]
fn read_ops_beside(text: &str, object: bool, loader: &mut Loader) -> Result<bool, serde_json::Error> {
    use std::sync::mpsc::sync_channel;
    let (full, batches) = sync_channel(8);
    let (to_reader, emptied) = sync_channel(8);
    std::thread::scope(|s| {
        let reader = s.spawn(move || read_ops(text, object, Target::Thread { full, emptied }));
        for mut batch in batches {
            for part in batch.chunks(BATCH) {
                loader.add_batch(part);
            }
            batch.clear();
            // The reader may have finished: then nobody takes it back.
            let _ = to_reader.try_send(batch);
        }
        reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Where the ops read go: into the loader, or to the thread that holds it (in batches, with
/// the emptied ones coming back for reuse).
enum Target<'l, 'a> {
    Loader(&'l mut Loader),
    #[cfg(not(target_arch = "wasm32"))]
    Thread {
        full: std::sync::mpsc::SyncSender<Vec<OpRef<'a>>>,
        emptied: std::sync::mpsc::Receiver<Vec<OpRef<'a>>>,
    },
    #[cfg(target_arch = "wasm32")]
    #[allow(dead_code)]
    Never(std::marker::PhantomData<&'a ()>),
}

/// Ops handed to a [`Loader`] at a time.
const BATCH: usize = 64;

/// The ops list, streamed into a [`Target`]; read as serde reads a `Vec<FileOp>` (the same
/// messages).
struct Ops<'l, 'a>(Target<'l, 'a>);

impl<'a> serde::de::DeserializeSeed<'a> for Ops<'_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'a>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'a> serde::de::Visitor<'a> for Ops<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: serde::de::SeqAccess<'a>>(self, mut seq: A) -> Result<(), A::Error> {
        match self.0 {
            Target::Loader(loader) => {
                // In batches: see `Loader::add_batch`.
                let mut batch: Vec<OpRef<'a>> = Vec::with_capacity(BATCH);
                while let Some(op) = seq.next_element::<OpRef<'a>>()? {
                    batch.push(op);
                    if batch.len() == BATCH {
                        loader.add_batch(&batch);
                        batch.clear();
                    }
                }
                loader.add_batch(&batch);
            }
            #[cfg(not(target_arch = "wasm32"))]
            Target::Thread { full, emptied } => {
                let mut batch = Vec::with_capacity(HANDOFF);
                while let Some(op) = seq.next_element::<OpRef<'a>>()? {
                    batch.push(op);
                    if batch.len() == HANDOFF {
                        let next = emptied.try_recv().unwrap_or_else(|_| Vec::with_capacity(HANDOFF));
                        // The building thread only stops when this one does.
                        let _ = full.send(std::mem::replace(&mut batch, next));
                    }
                }
                let _ = full.send(batch);
            }
            #[cfg(target_arch = "wasm32")]
            Target::Never(_) => {}
        }
        Ok(())
    }
}

/// The object form, its ops streamed into a [`Target`], its other keys skipped (the tensors
/// are read before); read as serde's derived `GraphFile` reads it. Its value: whether there is
/// a `tensors` key.
struct Object<'l, 'a>(Target<'l, 'a>);

impl<'a> serde::de::Visitor<'a> for Object<'_, 'a> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct GraphFile")
    }
    fn visit_map<A: serde::de::MapAccess<'a>>(self, mut map: A) -> Result<bool, A::Error> {
        use serde::de::Error;
        let (mut ops, mut tensors) = (false, false);
        let mut target = Some(self.0);
        while let Some(key) = map.next_key::<std::borrow::Cow<'a, str>>()? {
            match &*key {
                "ops" if ops => return Err(A::Error::duplicate_field("ops")),
                "ops" => {
                    ops = true;
                    // The first "ops" (a second is refused above) takes the target.
                    if let Some(target) = target.take() {
                        map.next_value_seed(Ops(target))?;
                    }
                }
                "tensors" if tensors => return Err(A::Error::duplicate_field("tensors")),
                "tensors" => {
                    tensors = true;
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        if !ops {
            return Err(A::Error::missing_field("ops"));
        }
        Ok(tensors)
    }
}

/// Parses the file's structure without validating the graph.
pub fn parse_file(text: &str) -> Result<GraphFile, GraphError> {
    match text.trim_start().as_bytes().first() {
        Some(b'[') => Ok(GraphFile { ops: serde_json::from_str(text).map_err(json_error)?, tensors: BTreeMap::new() }),
        Some(b'{') => serde_json::from_str(text).map_err(json_error),
        _ => {
            // Let serde_json say what is wrong with it (empty input, stray text...).
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(json_error)?;
            Err(GraphError::NotAGraph { at: super::error::At(Some(Location { line: 1, column: 1 })) })
        }
    }
}

/// serde_json's error as [`GraphError::Json`].
fn json_error(e: serde_json::Error) -> GraphError {
    GraphError::Json { line: e.line(), column: e.column(), message: strip_position(&e) }
}

/// Validates a parsed file into a graph; `op_at` and `tensor_at` give positions for errors.
pub fn build(
    file: &GraphFile,
    op_at: &dyn Fn(usize) -> Option<Location>,
    tensor_at: &dyn Fn(&str) -> Option<Location>,
) -> Result<OpGraph, GraphError> {
    build_from(file.tensors.iter().map(|(name, t)| (name.as_str(), t)), &file.ops).map_err(|failure| match failure {
        Failure::Graph(e) => e,
        Failure::At(e, spot) => {
            let loc = match spot {
                Spot::Op(i) => op_at(i),
                Spot::Tensor(name) => tensor_at(&name),
            };
            match loc {
                Some(l) => e.at(l),
                None => e,
            }
        }
    })
}

/// What in the file an error is about, to be placed by the caller.
enum Spot {
    Op(usize),
    Tensor(String),
}

/// Why building failed: an error to place at a [`Spot`], or one about the whole graph.
enum Failure {
    At(GraphError, Spot),
    Graph(GraphError),
}

/// Declares the tensors (in name order), adds the ops (in file order) and builds.
fn build_from<'t>(
    tensors: impl Iterator<Item = (&'t str, &'t FileTensor)>,
    ops: &[impl OpFields],
) -> Result<OpGraph, Failure> {
    let mut loader = Loader::new(ops.len(), tensors);
    for op in ops {
        loader.add(op);
    }
    loader.finish()
}

/// A graph being built op by op. It keeps the first failure and takes (and ignores) the ops
/// after it, so that a reader can go on to the end of the file and report a JSON fault
/// there first.
struct Loader {
    builder: GraphBuilder,
    /// Index of the next op in file order.
    next: usize,
    failed: Option<Failure>,
}

impl Loader {
    /// A builder for about `ops` ops, with `tensors` declared.
    fn new<'t>(ops: usize, tensors: impl Iterator<Item = (&'t str, &'t FileTensor)>) -> Self {
        let mut builder = GraphBuilder::with_capacity(ops);
        let mut failed = None;
        for (name, t) in tensors {
            if let Err(e) = builder.declare_tensor(name, &t.shape, t.bytes_per_element) {
                failed = Some(Failure::At(e, Spot::Tensor(name.to_string())));
                break;
            }
        }
        Loader { builder, next: 0, failed }
    }

    /// Adds `ops` in order, after touching the memory their names will be looked up in, all
    /// at once: on a large graph the name tables are far larger than the caches, and the
    /// misses of a batch then overlap rather than follow one another.
    fn add_batch(&mut self, ops: &[impl OpFields]) {
        if self.failed.is_none() {
            let warmed = ops.iter().fold(0, |acc, op| acc ^ self.builder.warm(op.name(), op.output(), op.inputs()));
            std::hint::black_box(warmed);
        }
        for op in ops {
            self.add(op);
        }
    }

    fn add(&mut self, op: &impl OpFields) {
        let i = self.next;
        self.next += 1;
        if self.failed.is_none() {
            if let Err(e) = add_op(&mut self.builder, op) {
                self.failed = Some(Failure::At(e, Spot::Op(i)));
            }
        }
    }

    fn finish(self) -> Result<OpGraph, Failure> {
        match self.failed {
            Some(f) => Err(f),
            None => self.builder.build().map_err(Failure::Graph),
        }
    }
}

/// Checks what the file's types leave open (op type, signs) and adds the op.
fn add_op(b: &mut GraphBuilder, op: &impl OpFields) -> Result<(), GraphError> {
    let name = op.name();
    let op_type: OpType = op.op_type().parse().map_err(|_| GraphError::UnknownOpType {
        op: name.to_string(),
        op_type: op.op_type().to_string(),
        at: Default::default(),
    })?;
    let shape = op.shape();
    if let Some(&dim) = shape.iter().find(|&&d| d < 0) {
        return Err(GraphError::NegativeOpDimension { op: name.to_string(), dim, at: Default::default() });
    }
    let bytes_per_element = op.bytes_per_element();
    if bytes_per_element < 1 {
        return Err(GraphError::OpBytesPerElement {
            op: name.to_string(),
            value: bytes_per_element,
            at: Default::default(),
        });
    }
    let shape = shape.iter().map(|&d| d as u64).collect();
    b.add_op_parts(name, op_type, op.inputs(), op.output(), shape, bytes_per_element as u64)?;
    Ok(())
}

/// Writes a graph back in the file format (declared tensors kept, assumed ones left out so
/// that reading it back gives the same analysis).
pub fn to_file(graph: &OpGraph) -> GraphFile {
    let ops = graph
        .ops()
        .iter()
        .map(|op| FileOp {
            name: op.name.clone(),
            op_type: op.op_type.as_str().to_string(),
            inputs: op.inputs.iter().map(|&t| graph.tensor(t).name.clone()).collect(),
            output: graph.tensor(op.output).name.clone(),
            shape: op.shape.iter().map(|&d| d as i64).collect(),
            bytes_per_element: op.bytes_per_element as i64,
        })
        .collect();
    let tensors = graph
        .tensors()
        .iter()
        .filter(|t| t.producer.is_none())
        .filter_map(|t| {
            t.declared.as_ref().map(|d| {
                (
                    t.name.clone(),
                    FileTensor {
                        shape: d.shape.iter().map(|&x| x as i64).collect(),
                        bytes_per_element: d.bytes_per_element.map(|b| b as i64),
                    },
                )
            })
        })
        .collect();
    GraphFile { ops, tensors }
}

#[cfg(test)]
mod tests;
