//! An op's recorded arguments, read from the three texts a trace keeps for a `cpu_op` recorded
//! with `record_shapes=True`: `args["Input Dims"]`, `args["Input type"]` and
//! `args["Concrete Inputs"]` (and `args["Input Strides"]`, which only refines: an expanded
//! input is read at the elements it holds). Each is a JSON array with one entry per op input,
//! in the op's signature order:
//!
//! ```text
//! "Input Dims":      [[1024], [8944, 1024], [1024, 1024], [], []]
//! "Input type":      ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]
//! "Concrete Inputs": ["", "", "", "1", "1"]
//! ```
//!
//! A type that names an element type makes the input a tensor (a 0-dim one when its dims are
//! `[]`); `Scalar` is a number or flag whose value is the concrete text; `ScalarList` an int
//! list written as text (`"[16, 559, 1024]"`); `TensorList` a list of tensors whose dims are a
//! list of shapes (the profiler records no element type for them); `GenericList` another list;
//! `""` an input the profiler did not describe (`None`, a device, a string, and, in older
//! traces, int lists). Concrete Inputs came with PyTorch 2.x; without them scalars have no
//! value, and models that need one say so.
//!
//! The texts come from a file, so reading them is bounded ([`limits`]): their length,
//! the number of inputs, tensors per list and dimensions per tensor. Negative or fractional
//! sizes are refused naming the input.

use serde_json::Value;

use super::dtype::DType;
use super::error::{ArgsError, Field, NoCost, Quantity};
use super::shape::Shape;
use limits::{PERF_ARGS_INPUTS, PERF_ARGS_LIST_TENSORS, PERF_ARGS_RANK, PERF_ARGS_TEXT_BYTES};

/// The raw JSON texts of one `cpu_op`'s `args`, `None` where the trace has no such key (a JSON
/// `null` counts as absent too). `input_strides` (`args["Input Strides"]`) only refines: a
/// tensor with a stride of 0 (an expanded view, one element standing for many) is read at its
/// distinct elements; strides that do not fit the dims are left unread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawArgs<'a> {
    pub input_dims: Option<&'a str>,
    pub input_type: Option<&'a str>,
    pub concrete_inputs: Option<&'a str>,
    pub input_strides: Option<&'a str>,
}

/// A tensor input: its position among the op's inputs, shape and element type, and, for an
/// expanded view, the elements it holds in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    index: usize,
    shape: Shape,
    dtype: DType,
    /// The distinct elements of an expanded view (the product of the sizes whose stride is not
    /// 0), `None` for a tensor whose every element is its own.
    stored: Option<u64>,
}

impl Tensor {
    /// A tensor at input `index`.
    pub fn new(index: usize, shape: Shape, dtype: DType) -> Tensor {
        Tensor { index, shape, dtype, stored: None }
    }

    /// The same tensor as an expanded view with `strides`: the sizes whose stride is 0 hold
    /// one element for all their positions. Strides of another rank leave it as it is.
    pub fn with_strides(self, strides: &[i64]) -> Tensor {
        let dims = self.shape.dims();
        // (An empty tensor holds nothing whatever its strides.)
        if strides.len() != dims.len() || !strides.contains(&0) || dims.contains(&0) {
            return self;
        }
        let stored = dims.iter().zip(strides).filter(|(_, &s)| s != 0).try_fold(1u64, |p, (&d, _)| p.checked_mul(d));
        Tensor { stored, ..self }
    }

    /// Its position among the op's inputs (what error messages name).
    pub fn index(&self) -> usize {
        self.index
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    pub fn dims(&self) -> &[u64] {
        self.shape.dims()
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Its element count; overflow is an error naming this input.
    pub fn numel(&self) -> Result<u64, NoCost> {
        self.shape.numel().ok_or(NoCost::Overflow { what: Quantity::Elements, input: self.index })
    }

    /// The bytes it holds, what reading it moves: its elements', or an expanded view's distinct
    /// elements'; overflow is an error naming this input.
    pub fn bytes(&self) -> Result<u64, NoCost> {
        let elements = match self.stored {
            Some(n) => n,
            None => self.numel()?,
        };
        elements
            .checked_mul(self.dtype.size_bytes())
            .ok_or(NoCost::Overflow { what: Quantity::Bytes, input: self.index })
    }
}

/// A list input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum List {
    /// `TensorList`: the shapes of its tensors (older traces record `[]` whatever the list
    /// held). The element type is not recorded.
    Tensors(Vec<Shape>),
    /// `ScalarList`: its concrete text (`"[1, 1]"`), `None` without Concrete Inputs.
    Scalars(Option<String>),
    /// `GenericList`: its concrete text, if any.
    Generic(Option<String>),
}

/// One op input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Tensor(Tensor),
    /// A tensor whose element type this module does not know (the name as written).
    UnknownTensor {
        type_name: String,
    },
    /// `Scalar`: its concrete text (`"1"`, `"True"`, `"0.125"`), `None` without Concrete Inputs.
    Scalar(Option<String>),
    List(List),
    /// Type `""`: `None`, or an argument the profiler does not describe.
    Absent,
}

impl Input {
    /// "a tensor", "a scalar", …: what an error says was found.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Input::Tensor(_) | Input::UnknownTensor { .. } => "a tensor",
            Input::Scalar(_) => "a scalar",
            Input::List(List::Tensors(_)) => "a tensor list",
            Input::List(_) => "a list",
            Input::Absent => "absent",
        }
    }
}

/// An op's inputs, typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpArgs {
    inputs: Vec<Input>,
    /// Whether the trace recorded Concrete Inputs: without them, an input of type `""` may be a
    /// value the profiler did not write down rather than `None`.
    concrete_recorded: bool,
}

impl OpArgs {
    /// A test's arguments: `Input Dims` and `Input type` as a trace records them, no Concrete
    /// Inputs; panics on text that does not parse. For this crate's tests and, with the feature
    /// `test-args`, a dependent's.
    #[cfg(any(test, feature = "test-args"))]
    pub fn recorded(dims: &str, types: &str) -> OpArgs {
        OpArgs::parse(RawArgs {
            input_dims: Some(dims),
            input_type: Some(types),
            concrete_inputs: None,
            input_strides: None,
        })
        .unwrap()
    }

    /// The arguments of three JSON texts as a trace writes them; for the models' unit tests.
    #[cfg(test)]
    pub(crate) fn of_text(dims: &str, types: &str, concrete: Option<&str>) -> OpArgs {
        OpArgs::parse(RawArgs {
            input_dims: Some(dims),
            input_type: Some(types),
            concrete_inputs: concrete,
            input_strides: None,
        })
        .expect("test arguments parse")
    }

    /// Inputs made in code (tests, other front ends); each tensor's index is set to its
    /// position.
    pub fn new(inputs: Vec<Input>, concrete_recorded: bool) -> OpArgs {
        let inputs = inputs
            .into_iter()
            .enumerate()
            .map(|(i, input)| match input {
                Input::Tensor(t) => Input::Tensor(Tensor { index: i, ..t }),
                other => other,
            })
            .collect();
        OpArgs { inputs, concrete_recorded }
    }

    /// Reads the three texts (see the module documentation). Without Input Dims there is
    /// nothing to read: [`ArgsError::MissingDims`].
    pub fn parse(raw: RawArgs<'_>) -> Result<OpArgs, ArgsError> {
        let dims = json_array(raw.input_dims, Field::InputDims)?.ok_or(ArgsError::MissingDims)?;
        let types = json_array(raw.input_type, Field::InputType)?.ok_or(ArgsError::MissingTypes)?;
        let concrete = json_array(raw.concrete_inputs, Field::ConcreteInputs)?;
        same_length(&types, Field::InputType, dims.len())?;
        if let Some(c) = &concrete {
            same_length(c, Field::ConcreteInputs, dims.len())?;
        }
        let mut inputs = dims
            .iter()
            .zip(&types)
            .enumerate()
            .map(|(i, (d, t))| read_input(i, d, t, concrete.as_ref().map(|c| &c[i])))
            .collect::<Result<Vec<_>, _>>()?;
        // Strides only refine what the dims say: any that do not fit are left unread.
        if let Ok(Some(strides)) = json_array(raw.input_strides, Field::InputStrides) {
            if strides.len() == inputs.len() {
                for (input, s) in inputs.iter_mut().zip(&strides) {
                    let ints = s.as_array().and_then(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<i64>>>());
                    if let (Input::Tensor(t), Some(ints)) = (&*input, ints) {
                        *input = Input::Tensor(t.clone().with_strides(&ints));
                    }
                }
            }
        }
        Ok(OpArgs { inputs, concrete_recorded: concrete.is_some() })
    }

    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    pub fn concrete_recorded(&self) -> bool {
        self.concrete_recorded
    }

    /// Input `i`, `None` past the end.
    pub fn input(&self, i: usize) -> Option<&Input> {
        self.inputs.get(i)
    }

    /// Every tensor input, in order.
    pub fn tensors(&self) -> impl Iterator<Item = &Tensor> {
        self.inputs.iter().filter_map(|input| match input {
            Input::Tensor(t) => Some(t),
            _ => None,
        })
    }

    /// Input `i` as a tensor; `expected` names its role for the error ("the weight").
    pub fn tensor(&self, i: usize, expected: &'static str) -> Result<&Tensor, NoCost> {
        self.opt_tensor(i, expected)?.ok_or(NoCost::Input { input: i, expected, found: "absent" })
    }

    /// Input `i` as an optional tensor (a bias): `None` when absent or past the end.
    pub fn opt_tensor(&self, i: usize, expected: &'static str) -> Result<Option<&Tensor>, NoCost> {
        match self.inputs.get(i) {
            None | Some(Input::Absent) => Ok(None),
            Some(Input::Tensor(t)) => Ok(Some(t)),
            Some(Input::UnknownTensor { type_name }) => Err(NoCost::UnknownDType { input: i, name: type_name.clone() }),
            Some(other) => Err(NoCost::Input { input: i, expected, found: other.kind_name() }),
        }
    }

    /// The concrete text of scalar or scalar-list input `i`: `None` when the input is absent
    /// (`None` in the call) or past the end (the signature's default applies). An input the
    /// profiler wrote no value for is [`NoCost::MissingConcrete`], and so is an absent one
    /// when the trace has no Concrete Inputs at all (older profilers write `""` for int lists,
    /// so absent does not mean `None` there).
    pub fn concrete(&self, i: usize, what: &'static str) -> Result<Option<&str>, NoCost> {
        let missing = NoCost::MissingConcrete { input: i, what };
        match self.inputs.get(i) {
            None => Ok(None),
            Some(Input::Absent) if self.concrete_recorded => Ok(None),
            Some(Input::Absent) => Err(missing),
            Some(Input::Scalar(text) | Input::List(List::Scalars(text) | List::Generic(text))) => {
                text.as_deref().map(Some).ok_or(missing)
            }
            Some(other) => Err(NoCost::Input { input: i, expected: what, found: other.kind_name() }),
        }
    }

    /// Flag input `i` (`"True"`/`"False"`), `default` when absent or past the end.
    pub fn flag(&self, i: usize, what: &'static str, default: bool) -> Result<bool, NoCost> {
        match self.concrete(i, what)? {
            None => Ok(default),
            Some("True" | "true" | "1") => Ok(true),
            Some("False" | "false" | "0") => Ok(false),
            Some(text) => Err(bad(i, what, text)),
        }
    }

    /// Integer input `i`, `None` when absent or past the end.
    pub fn int(&self, i: usize, what: &'static str) -> Result<Option<i64>, NoCost> {
        self.concrete(i, what)?.map(|text| text.trim().parse::<i64>().map_err(|_| bad(i, what, text))).transpose()
    }

    /// Int-list input `i` (`"[1, 1]"`; a single int counts as a list of one), `None` when
    /// absent or past the end.
    pub fn int_list(&self, i: usize, what: &'static str) -> Result<Option<Vec<i64>>, NoCost> {
        self.concrete(i, what)?
            .map(|text| {
                let t = text.trim();
                if t.starts_with('[') {
                    serde_json::from_str::<Vec<i64>>(t).map_err(|_| bad(i, what, text))
                } else {
                    t.parse::<i64>().map(|v| vec![v]).map_err(|_| bad(i, what, text))
                }
            })
            .transpose()
    }
}

fn bad(input: usize, what: &'static str, text: &str) -> NoCost {
    // The text is echoed in a one-line message: keep it short.
    let text: String = text.chars().take(40).collect();
    NoCost::BadConcrete { input, what, text }
}

/// The text as a JSON array, `None` when absent or `null`; bounded in length and entries.
fn json_array(text: Option<&str>, field: Field) -> Result<Option<Vec<Value>>, ArgsError> {
    let Some(text) = text else { return Ok(None) };
    if text.len() > PERF_ARGS_TEXT_BYTES {
        return Err(ArgsError::TooLong { field, limit: PERF_ARGS_TEXT_BYTES });
    }
    // serde_json refuses nesting deeper than 128 levels itself, so a crafted `[[[[…` ends
    // here without exhausting the stack.
    let value: Value = serde_json::from_str(text).map_err(|e| ArgsError::NotJson { field, problem: e.to_string() })?;
    match value {
        Value::Null => Ok(None),
        Value::Array(entries) if entries.len() > PERF_ARGS_INPUTS => {
            Err(ArgsError::TooManyInputs { field, count: entries.len(), limit: PERF_ARGS_INPUTS })
        }
        Value::Array(entries) => Ok(Some(entries)),
        _ => Err(ArgsError::NotArray { field }),
    }
}

fn same_length(entries: &[Value], field: Field, dims: usize) -> Result<(), ArgsError> {
    if entries.len() == dims {
        Ok(())
    } else {
        Err(ArgsError::LengthMismatch { field, len: entries.len(), dims })
    }
}

fn read_input(i: usize, dims: &Value, ty: &Value, concrete: Option<&Value>) -> Result<Input, ArgsError> {
    let ty = ty.as_str().ok_or(ArgsError::Malformed { field: Field::InputType, input: i, expected: "text" })?;
    let text = concrete.map(|c| concrete_text(i, c)).transpose()?.flatten();
    Ok(match ty {
        "" => Input::Absent,
        "Scalar" => Input::Scalar(text),
        "ScalarList" => Input::List(List::Scalars(text)),
        "GenericList" => Input::List(List::Generic(text)),
        "TensorList" => Input::List(List::Tensors(read_shape_list(i, dims)?)),
        name => match DType::from_trace_name(name) {
            Some(dtype) => Input::Tensor(Tensor::new(i, read_shape(i, dims)?, dtype)),
            None => Input::UnknownTensor { type_name: name.chars().take(80).collect() },
        },
    })
}

/// A concrete entry as text: strings as they are, numbers and flags written out, `null` none.
fn concrete_text(i: usize, value: &Value) -> Result<Option<String>, ArgsError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(_) | Value::Bool(_) | Value::Array(_) => Ok(Some(value.to_string())),
        Value::Object(_) => Err(ArgsError::Malformed { field: Field::ConcreteInputs, input: i, expected: "text" }),
    }
}

fn read_shape(i: usize, dims: &Value) -> Result<Shape, ArgsError> {
    let malformed = ArgsError::Malformed { field: Field::InputDims, input: i, expected: "a list of sizes" };
    let sizes = dims.as_array().ok_or(malformed.clone())?;
    if sizes.len() > PERF_ARGS_RANK {
        return Err(ArgsError::RankTooHigh { input: i, rank: sizes.len(), limit: PERF_ARGS_RANK });
    }
    sizes
        .iter()
        .map(|size| match size {
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Ok(u),
                (None, Some(neg)) => Err(ArgsError::NegativeDim { input: i, dim: neg }),
                (None, None) => Err(ArgsError::BadDim { input: i, text: n.to_string() }),
            },
            _ => Err(malformed.clone()),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Shape::new)
}

fn read_shape_list(i: usize, dims: &Value) -> Result<Vec<Shape>, ArgsError> {
    let malformed = ArgsError::Malformed { field: Field::InputDims, input: i, expected: "a list of shapes" };
    let shapes = dims.as_array().ok_or(malformed)?;
    if shapes.len() > PERF_ARGS_LIST_TENSORS {
        return Err(ArgsError::ListTooLong { input: i, len: shapes.len(), limit: PERF_ARGS_LIST_TENSORS });
    }
    shapes.iter().map(|s| read_shape(i, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw<'a>(dims: &'a str, types: &'a str, concrete: Option<&'a str>) -> RawArgs<'a> {
        RawArgs { input_dims: Some(dims), input_type: Some(types), concrete_inputs: concrete, input_strides: None }
    }

    #[test]
    fn reads_tensors_scalars_lists_and_absent() {
        let args = OpArgs::parse(raw(
            r#"[[16, 16, 559, 64], [], [[1, 559, 32], [1, 559, 32]], [], [], []]"#,
            r#"["c10::BFloat16", "Scalar", "TensorList", "ScalarList", "", "double"]"#,
            Some(r#"["", "True", "", "[-1]", "", ""]"#),
        ))
        .unwrap();
        assert_eq!(args.len(), 6);
        let t = args.tensor(0, "q").unwrap();
        assert_eq!((t.dims(), t.dtype(), t.index()), (&[16, 16, 559, 64][..], DType::BF16, 0));
        assert!(args.flag(1, "is_causal", false).unwrap());
        assert_eq!(
            args.input(2),
            Some(&Input::List(List::Tensors(vec![Shape::new(vec![1, 559, 32]), Shape::new(vec![1, 559, 32])])))
        );
        assert_eq!(args.int_list(3, "dim").unwrap(), Some(vec![-1]));
        assert_eq!(args.int_list(4, "dim").unwrap(), None);
        assert_eq!(args.tensor(5, "other").unwrap().dims(), &[] as &[u64]);
        assert_eq!(args.int(9, "past the end").unwrap(), None);
    }

    #[test]
    fn without_concrete_inputs_values_are_missing() {
        let args = OpArgs::parse(raw(r#"[[6, 65536], [], [], []]"#, r#"["int", "", "Scalar", ""]"#, None)).unwrap();
        assert!(!args.concrete_recorded());
        assert_eq!(
            args.int_list(1, "dim").unwrap_err().to_string(),
            "Concrete Inputs missing: dim (input 1) is needed"
        );
        assert_eq!(
            args.flag(2, "keepdim", false).unwrap_err().to_string(),
            "Concrete Inputs missing: keepdim (input 2) is needed"
        );
    }

    #[test]
    fn refuses_bad_text_with_reasons() {
        let err = |d: &str, t: &str, c: Option<&str>| OpArgs::parse(raw(d, t, c)).unwrap_err().to_string();
        assert_eq!(err("[[2], [-3]]", r#"["float", "float"]"#, None), "dim -3 in input 1");
        assert_eq!(err("[[2.5]]", r#"["float"]"#, None), "dim 2.5 in input 0 is not a whole number");
        assert_eq!(err("[[2]]", r#"["float", "float"]"#, None), "Input type has 2 entries but Input Dims has 1");
        assert_eq!(err("[[2]]", r#"["float"]"#, Some("[]")), "Concrete Inputs has 0 entries but Input Dims has 1");
        assert_eq!(err("[[[2]]]", r#"["float"]"#, None), "Input Dims of input 0 is not a list of sizes");
        assert_eq!(err("[[[[2]]]]", r#"["TensorList"]"#, None), "Input Dims of input 0 is not a list of sizes");
        assert_eq!(err("{}", r#"["float"]"#, None), "Input Dims is not a JSON array");
        assert!(err("[[2]", r#"["float"]"#, None).starts_with("Input Dims is not valid JSON"));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(err(&deep, r#"["float"]"#, None).starts_with("Input Dims is not valid JSON"));
        let rank = format!("[[{}]]", vec!["1"; PERF_ARGS_RANK + 1].join(","));
        assert_eq!(
            err(&rank, r#"["float"]"#, None),
            format!("input 0 has 65 dimensions, more than the limit of {PERF_ARGS_RANK}")
        );
        let long = format!("[{}]", " ".repeat(PERF_ARGS_TEXT_BYTES));
        assert_eq!(err(&long, "[]", None), "Input Dims is larger than the limit of 1.00 MiB (1,048,576 bytes)");
        assert_eq!(
            OpArgs::parse(RawArgs { input_dims: None, ..Default::default() }).unwrap_err().to_string(),
            "Input Dims missing (trace recorded without record_shapes)"
        );
        assert_eq!(
            OpArgs::parse(RawArgs { input_dims: Some("null"), ..Default::default() }).unwrap_err(),
            ArgsError::MissingDims
        );
    }

    #[test]
    fn unknown_types_are_kept_until_a_model_needs_them() {
        let args = OpArgs::parse(raw("[[4, 4]]", r#"["c10::complex<float>"]"#, None)).unwrap();
        assert_eq!(
            args.tensor(0, "self").unwrap_err().to_string(),
            "unknown element type \"c10::complex<float>\" of input 0"
        );
    }

    #[test]
    fn wrong_kind_of_input_is_named() {
        let args = OpArgs::parse(raw("[[], [4]]", r#"["Scalar", "float"]"#, Some(r#"["2", ""]"#))).unwrap();
        assert_eq!(args.tensor(0, "the matrix").unwrap_err().to_string(), "input 0 is a scalar, expected the matrix");
        assert_eq!(args.tensor(2, "the matrix").unwrap_err().to_string(), "input 2 is absent, expected the matrix");
        assert_eq!(
            args.flag(0, "is_causal", false).unwrap_err().to_string(),
            "cannot read is_causal (input 0) from \"2\""
        );
    }
}
