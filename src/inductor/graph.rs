//! An FX graph as Inductor logs it (`after_post_grad_graph`, `after_pre_grad_graph`): Python
//! text with one node per line, `name: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.mm.default(a, b)`.
//! Only what the kernel groups need is read: each node's name, target, type and the nodes it
//! reads; comments, stack traces and the `= None` frees FX appends are passed over.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::error::GraphError;
use crate::tensor::Tensor;

/// One node of a graph.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub name: String,
    /// What it computes: an ATen op without `torch.ops.` (`aten.mm.default`), `getitem`,
    /// `placeholder` for a graph input, `get_attr` for a parameter read off the module, or the
    /// callee as written (`torch._C._nn.gelu`).
    pub target: String,
    /// Its type; `None` for a node that yields a tuple (read through `getitem`) or a symbol.
    pub tensor: Option<Tensor>,
    /// The nodes it reads, in order, each once.
    pub inputs: Vec<u32>,
}

impl Node {
    /// Whether the node moves no data of its own: a graph input, a view of another node, or
    /// one element of a tuple.
    pub fn is_alias(&self) -> bool {
        matches!(self.target.as_str(), "placeholder" | "get_attr" | "getitem") || is_view(&self.target)
    }

    /// The op's short name (`mm`, `gelu`, `getitem`).
    pub fn op(&self) -> &str {
        let t = self.target.strip_prefix("aten.").unwrap_or(&self.target);
        let t = match t.rsplit_once('.') {
            Some((head, overload)) if self.target.starts_with("aten.") && !head.is_empty() && !overload.is_empty() => {
                head
            }
            _ => t,
        };
        t.rsplit('.').next().unwrap_or(t)
    }
}

/// ATen ops that return a view of their input: no data moves when one runs.
fn is_view(target: &str) -> bool {
    let Some(op) = target.strip_prefix("aten.") else { return false };
    let op = op.split('.').next().unwrap_or(op);
    matches!(
        op,
        "view"
            | "_unsafe_view"
            | "reshape"
            | "permute"
            | "expand"
            | "t"
            | "transpose"
            | "unsqueeze"
            | "squeeze"
            | "slice"
            | "select"
            | "alias"
            | "as_strided"
            | "view_as_real"
            | "view_as_complex"
            | "unbind"
            | "split"
            | "split_with_sizes"
            | "narrow"
            | "diagonal"
            | "detach"
            | "unfold"
            | "view_as"
            | "_reshape_alias"
            | "expand_as"
    )
}

/// A parsed graph: its nodes in order, by name, and what it returns.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Graph {
    pub nodes: Vec<Node>,
    #[serde(skip)]
    pub by_name: FxHashMap<String, u32>,
    pub outputs: Vec<u32>,
}

impl Graph {
    /// Parses the text of one graph, at most `max_nodes` nodes.
    pub fn parse(text: &str, max_nodes: usize) -> Result<Graph, GraphError> {
        let mut g = Graph::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with("class ") {
                continue;
            }
            if let Some(params) = line.strip_prefix("def forward(") {
                for (name, annotation) in declarations(params) {
                    g.push(name, "placeholder", Tensor::parse(annotation), Vec::new(), max_nodes, i)?;
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("return ") {
                g.outputs = identifiers(rest).filter_map(|n| g.by_name.get(n).copied()).collect();
                continue;
            }
            g.statement(line, max_nodes, i)?;
        }
        Ok(g)
    }

    fn statement(&mut self, line: &str, max_nodes: usize, i: usize) -> Result<(), GraphError> {
        let name_end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(line.len());
        let name = &line[..name_end];
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            return Ok(());
        }
        let rest = &line[name_end..];
        let (annotation, rest) = match rest.strip_prefix(": \"") {
            Some(r) => match r.find('"') {
                Some(close) => (Some(&r[..close]), &r[close + 1..]),
                None => return Err(GraphError { line: i + 1, message: format!("the type of {name} is not closed") }),
            },
            None => (None, rest),
        };
        let Some(expr) = rest.strip_prefix(" = ") else {
            // `a: "T"; b: "T";` declares graph inputs (an exported program's graph).
            if let Some(a) = annotation {
                if rest.is_empty() || rest.starts_with(';') {
                    self.push(name, "placeholder", Tensor::parse(a), Vec::new(), max_nodes, i)?;
                    for (n, a) in declarations(rest) {
                        self.push(n, "placeholder", Tensor::parse(a), Vec::new(), max_nodes, i)?;
                    }
                }
            }
            return Ok(());
        };
        let expr = statement_end(expr);
        let (target, args) = match expr.find('(') {
            Some(open) if is_callee(&expr[..open]) => {
                let callee = expr[..open].trim();
                (callee.strip_prefix("torch.ops.").unwrap_or(callee).to_string(), &expr[open..])
            }
            _ if expr.starts_with("self.") => ("get_attr".to_string(), ""),
            _ if expr.ends_with(']') && expr.contains('[') => ("getitem".to_string(), expr),
            _ if annotation.is_none() && self.by_name.contains_key(expr.trim()) => {
                // `l_x_ = L_x_`: another name for a node.
                let base = self.by_name[expr.trim()];
                self.by_name.insert(name.to_string(), base);
                return Ok(());
            }
            _ => (expr.trim().to_string(), expr),
        };
        let mut inputs: Vec<u32> = Vec::new();
        for id in identifiers(args) {
            if let Some(&n) = self.by_name.get(id) {
                if !inputs.contains(&n) {
                    inputs.push(n);
                }
            }
        }
        self.push(name, &target, annotation.and_then(Tensor::parse), inputs, max_nodes, i)
    }

    fn push(
        &mut self,
        name: &str,
        target: &str,
        tensor: Option<Tensor>,
        inputs: Vec<u32>,
        max_nodes: usize,
        i: usize,
    ) -> Result<(), GraphError> {
        if self.nodes.len() >= max_nodes {
            return Err(GraphError { line: i + 1, message: format!("more than {max_nodes} nodes") });
        }
        let index = self.nodes.len() as u32;
        self.by_name.insert(name.to_string(), index);
        self.nodes.push(Node { name: name.to_string(), target: target.to_string(), tensor, inputs });
        Ok(())
    }

    /// Each node's readers, by index.
    pub fn consumers(&self) -> Vec<Vec<u32>> {
        let mut c = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for &input in &n.inputs {
                c[input as usize].push(i as u32);
            }
        }
        c
    }
}

/// `name: "type"` pairs of a parameter list or a declaration line.
fn declarations(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split('"')
        .collect::<Vec<_>>()
        .chunks(2)
        .filter_map(|pair| {
            let [head, annotation] = pair else { return None };
            let head = head.trim_end().strip_suffix(':')?;
            let name = head.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()?;
            (!name.is_empty()).then_some((name, *annotation))
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// The statement without the `;  a = b = None` frees FX appends: up to the first `;` outside
/// brackets and quotes.
fn statement_end(expr: &str) -> &str {
    let (mut depth, mut quote) = (0i32, None);
    for (i, c) in expr.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ';') if depth <= 0 => return &expr[..i],
            _ => {}
        }
    }
    expr
}

fn is_callee(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// Names used as values in `text`: identifiers outside quotes that are not an attribute
/// (`torch.float32`'s `float32`) or a keyword argument's name (`inplace = False`).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut quote) = (0, None);
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == b'\'' || c == b'"' {
            quote = Some(c);
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let attribute = start > 0 && bytes[start - 1] == b'.';
            let after = text[i..].trim_start();
            let keyword = after.starts_with('=') && !after.starts_with("==");
            if !attribute && !keyword {
                out.push(&text[start..i]);
            }
            continue;
        }
        i += 1;
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    const POST_GRAD: &str = r#"class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 10][10, 1]cuda:0", arg1_1: "f32[16][1]cuda:0", arg2_1: "f32[8, 10][10, 1]cuda:0"):
         # File: aot.py:29 in forward, code: x = self.fc1(x)
        permute: "f32[10, 16][1, 10]cuda:0" = torch.ops.aten.permute.default(arg0_1, [1, 0]);  arg0_1 = None
        mm_default_1: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.mm.default(arg2_1, permute);  arg2_1 = permute = None
        add_tensor_1: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.add.Tensor(mm_default_1, arg1_1);  mm_default_1 = arg1_1 = None
        var_mean = torch.ops.aten.var_mean.correction(add_tensor_1, [1], correction = 0, keepdim = True)
        getitem: "f32[8, 1][1, 1]cuda:0" = var_mean[0]
        relu: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.relu.default(add_tensor_1);  add_tensor_1 = None
        return (relu, getitem)
"#;

    #[test]
    fn nodes_carry_their_targets_types_and_inputs() {
        let g = Graph::parse(POST_GRAD, 100).unwrap();
        let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            ["arg0_1", "arg1_1", "arg2_1", "permute", "mm_default_1", "add_tensor_1", "var_mean", "getitem", "relu"]
        );
        let mm = &g.nodes[4];
        assert_eq!(mm.target, "aten.mm.default");
        assert_eq!(mm.op(), "mm");
        assert_eq!(mm.inputs, [2, 3]);
        assert_eq!(mm.tensor.as_ref().unwrap().text, "f32[8, 16]");
        // Keyword names (`correction`, `keepdim`) are not inputs.
        assert_eq!(g.nodes[6].inputs, [5]);
        assert!(g.nodes[6].tensor.is_none());
        assert_eq!(g.nodes[7].target, "getitem");
        assert_eq!(g.nodes[7].inputs, [6]);
        assert!(g.nodes[3].is_alias() && g.nodes[7].is_alias() && !g.nodes[4].is_alias());
        assert_eq!(g.outputs, [8, 7]);
    }

    #[test]
    fn declared_inputs_and_module_attributes_are_nodes() {
        let text = "    def forward(self):\n        arg2_1: \"f32[8, 10][10, 1]cpu\"; arg3_1: \"f32[10, 20][20, 1]cpu\"; \n        arg2_1, arg3_1, = fx_pytree.tree_flatten_spec([], self._in_spec)\n        fc1_weight: \"f32[16, 10][10, 1]cpu\" = self.fc1.weight\n        mul: \"f32[10, 20][20, 1]cpu\" = torch.ops.aten.mul.Tensor(arg3_1, 3.14);  arg3_1 = None\n        return (mul,)\n";
        let g = Graph::parse(text, 100).unwrap();
        let names: Vec<(&str, &str)> = g.nodes.iter().map(|n| (n.name.as_str(), n.target.as_str())).collect();
        assert_eq!(
            names,
            [
                ("arg2_1", "placeholder"),
                ("arg3_1", "placeholder"),
                ("fc1_weight", "get_attr"),
                ("mul", "aten.mul.Tensor")
            ]
        );
        assert_eq!(g.nodes[3].inputs, [1]);
        assert_eq!(g.outputs, [3]);
    }

    #[test]
    fn a_graph_past_its_budget_is_refused_with_its_line() {
        let err = Graph::parse(POST_GRAD, 3).unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.message.contains("more than 3 nodes"), "{}", err.message);
    }
}
