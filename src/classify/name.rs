//! Splits a kernel name into the parts the rules look at: the base name (the function's own
//! identifier, without return type, namespaces, template arguments or parameters), its
//! namespaces, and the rest (template arguments and parameters).
//!
//! Kernel names come demangled (`void at::native::foo<4, Bar<int> >(int, Bar<int>)`), plain
//! (`nvjet_tst_…`, `triton_poi_fused_…`) or, for some ROCm module launches, still mangled
//! (`_ZN4vllm18act_and_mul_kernelI…`). The split never fails: an unbalanced or truncated name
//! still gives a base name (at worst the whole name).

/// A kernel name split for matching. Every part is ASCII-lowercased, so rules match
/// case-insensitively with plain substring tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameParts {
    /// The function's own identifier: `vectorized_elementwise_kernel`, `nvjet_tst_64x8_…`.
    pub base: String,
    /// The enclosing namespaces and classes, `::`-separated: `at::native::(anonymous namespace)`.
    pub namespace: String,
    /// Everything after the base name: template arguments and parameter list (demangled), or
    /// the encoded template arguments and parameters (mangled).
    pub inner: String,
}

impl NameParts {
    /// Splits `name` (see the module documentation for the forms understood).
    pub fn parse(name: &str) -> NameParts {
        let name = name.trim();
        if let Some(parts) = parse_mangled(name) {
            return parts;
        }
        parse_demangled(name)
    }
}

/// The text that marks an anonymous namespace in demangled names; its parentheses are not a
/// parameter list.
const ANONYMOUS_NAMESPACE: &str = "(anonymous namespace)";

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Splits a demangled or plain name: `[return type] [ns::]*base[<targs>][(params)][ const]`.
fn parse_demangled(name: &str) -> NameParts {
    // A plain symbol (no scope, template, parameter list or space) is its own base: XLA names
    // its ops `ynn_fusion.5` and `wrapped_reduce-window.1`, whose `.` and `-` end no identifier.
    if !name.contains([':', '<', '(', '[', '{', ' ']) {
        return NameParts { base: name.to_ascii_lowercase(), namespace: String::new(), inner: String::new() };
    }
    let head = &name[..head_end(name)];
    let base_end = template_args_start(head).unwrap_or(head.len());
    let base_start = head[..base_end]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_ident_char(c))
        .last()
        .map_or(base_end, |(i, _)| i);
    if base_start == base_end {
        // Not a recognisable identifier (punctuation, truncated template): match the whole name.
        return NameParts { base: name.to_ascii_lowercase(), namespace: String::new(), inner: String::new() };
    }
    let namespace = head[..base_start].strip_suffix("::").map(qualifier_suffix).unwrap_or("");
    NameParts {
        base: head[base_start..base_end].to_ascii_lowercase(),
        namespace: namespace.to_ascii_lowercase(),
        inner: name[base_end..].to_ascii_lowercase(),
    }
}

/// Byte index where the head (`[return type] [ns::]*base[<targs>]`) ends: the `(` that opens
/// the parameter list, i.e. the first `(` outside every `<…>`, `(…)`, `[…]` and `{…}` (skipping
/// `(anonymous namespace)`). In a truncated name with no parameter list, the head ends where
/// the outermost bracket left open begins, so `void foo<int, (ba` still has the base `foo`.
fn head_end(name: &str) -> usize {
    let mut stack: Vec<(char, usize)> = Vec::new();
    let mut iter = name.char_indices();
    while let Some((i, c)) = iter.next() {
        match c {
            '(' if name[i..].starts_with(ANONYMOUS_NAMESPACE) => {
                // Skip the rest of the marker; it belongs to a qualified name.
                for _ in 1..ANONYMOUS_NAMESPACE.len() {
                    iter.next();
                }
            }
            '(' if stack.is_empty() => return i,
            '(' | '<' | '[' | '{' => stack.push((c, i)),
            ')' | '>' | ']' | '}' => pop_matching(&mut stack, c),
            _ => {}
        }
    }
    stack.first().map_or(name.len(), |&(_, i)| i)
}

/// Pops the stack when `close` matches its top. A `>` inside parentheses is a comparison
/// (`enable_if<((8)>(0))>`), not a closing bracket, so it is ignored.
fn pop_matching(stack: &mut Vec<(char, usize)>, close: char) {
    let open = match close {
        ')' => '(',
        '>' => '<',
        ']' => '[',
        _ => '{',
    };
    if stack.last().is_some_and(|&(c, _)| c == open) {
        stack.pop();
    }
}

/// Byte index of the `<` that opens the trailing template-argument list of `head`
/// (`…foo<int, Bar<2> >`), or None when `head` does not end with one.
fn template_args_start(head: &str) -> Option<usize> {
    let trimmed = head.trim_end();
    if !trimmed.ends_with('>') {
        return None;
    }
    // Walk backwards; closing brackets are pushed, opening ones pop their match.
    let mut stack: Vec<char> = Vec::new();
    for (i, c) in trimmed.char_indices().rev() {
        match c {
            '>' if stack.last() == Some(&')') => {} // comparison inside parentheses
            '>' | ')' | ']' | '}' => stack.push(c),
            '<' | '(' | '[' | '{' => {
                let close = match c {
                    '<' => '>',
                    '(' => ')',
                    '[' => ']',
                    _ => '}',
                };
                if stack.last() == Some(&close) {
                    stack.pop();
                }
                if stack.is_empty() {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The qualifier that ends `text` (`void at::native::` → `at::native`): the part after the
/// last space that is outside brackets.
fn qualifier_suffix(text: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' | '>' | ']' | '}' => depth += 1,
            '(' | '<' | '[' | '{' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => return &text[i + 1..],
            _ => {}
        }
    }
    text
}

/// Reads the identifiers of an Itanium-mangled function name: `_Z<len><id>…` or the nested
/// `_ZN[K][St]<len><id>…<len><id>E…`. Returns None when `name` is not mangled or no identifier
/// can be read, so the caller matches the name as is.
fn parse_mangled(name: &str) -> Option<NameParts> {
    let mut rest = name.strip_prefix("_Z")?;
    rest = rest.strip_prefix('L').unwrap_or(rest);
    let mut idents: Vec<&str> = Vec::new();
    if let Some(nested) = rest.strip_prefix('N') {
        rest = nested.trim_start_matches(['K', 'V', 'r']);
        if let Some(after_std) = rest.strip_prefix("St") {
            idents.push("std");
            rest = after_std;
        }
        while let Some((ident, after)) = read_source_name(rest) {
            idents.push(ident);
            rest = after;
        }
        rest = rest.strip_prefix('E').unwrap_or(rest);
    } else {
        let (ident, after) = read_source_name(rest)?;
        idents.push(ident);
        rest = after;
    }
    let (base, namespaces) = idents.split_last()?;
    if idents.iter().all(|i| *i == "std") {
        return None;
    }
    Some(NameParts {
        base: base.to_ascii_lowercase(),
        namespace: namespaces.join("::").to_ascii_lowercase(),
        inner: rest.to_ascii_lowercase(),
    })
}

/// Reads one `<decimal length><identifier>` from the front of `text`.
fn read_source_name(text: &str) -> Option<(&str, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 6 {
        return None;
    }
    let len: usize = text[..digits].parse().ok()?;
    let ident = text.get(digits..digits + len)?;
    if len == 0 || !ident.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$') {
        return None;
    }
    Some((ident, &text[digits + len..]))
}

/// The ops a compiler's kernel name lists, read from its `words` against `table` (op name →
/// category, an op of several words joined by `_`), the longest op first at each word, ops of
/// at most `max_words` words; and whether every word was part of an op. Inductor drops the
/// words it does not know; XLA's names hold nothing but opcodes.
pub(crate) fn ops_in(
    words: &[&str],
    table: &'static [(&'static str, Option<crate::category::Category>)],
    max_words: usize,
) -> (Vec<&'static str>, bool) {
    let (mut found, mut all_known, mut i) = (Vec::new(), true, 0);
    while i < words.len() {
        let longest = (1..=max_words.min(words.len() - i)).rev().find_map(|n| {
            let phrase = words[i..i + n].join("_");
            table.iter().find(|(op, _)| *op == phrase).map(|(op, _)| (n, *op))
        });
        match longest {
            Some((n, op)) => {
                found.push(op);
                i += n;
            }
            None => {
                all_known = false;
                i += 1;
            }
        }
    }
    (found, all_known)
}

/// `name` without a trailing `<sep><digits>` (a compiler's kernel index: `_3`, `.1`).
pub(crate) fn strip_index(name: &str, sep: char) -> &str {
    match name.rsplit_once(sep) {
        Some((head, index)) if !head.is_empty() && !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => {
            head
        }
        _ => name,
    }
}

/// A kernel name shortened to at most `width` characters for tables, keeping what tells
/// kernels apart. Kernel names run to kilobytes, and cutting them at a fixed width leaves
/// `void at::native::…` or three identical `Cijk_Alik_Bljk_…` prefixes. Instead:
/// C++ names lose their return type and namespaces and keep the base name and the start of
/// the template arguments (which often names the functor: `…<4, at::native::cos_kernel…`);
/// mangled names show their base name; plain symbols (Tensile, nvjet, Triton) keep their
/// head and tail around a middle ellipsis, since tile sizes and ISA tags sit at the end.
///
/// A name that is already short (it holds the `…` this function writes, which no compiler
/// emits, and fits `width`) is returned as it is, so that shortening is idempotent: a share
/// link can carry the short names and the page shows the same text.
pub fn short_name(name: &str, width: usize) -> String {
    let width = width.max(8);
    let name = name.trim();
    if name.contains('…') && name.chars().count() <= width {
        return name.to_string();
    }
    let parts = NameParts::parse(name);
    let mangled = name.starts_with("_Z");
    // The parts are lower-cased for matching; show the original text from the base name on.
    let from_base = || {
        let lower = name.to_ascii_lowercase();
        lower
            .match_indices(parts.base.as_str())
            .map(|(i, _)| i)
            .find(|&i| matches!(lower.as_bytes().get(i + parts.base.len()), None | Some(b'<' | b'(' | b' ')))
            .map(|i| name[i..].to_string())
    };
    let display = if parts.base.is_empty() {
        name.to_string()
    } else if mangled {
        let base = from_base().map_or(parts.base.clone(), |s| s[..parts.base.len()].to_string());
        if parts.inner.is_empty() {
            base
        } else {
            format!("{base}<…>")
        }
    } else {
        from_base().unwrap_or_else(|| name.to_string())
    };
    let chars: Vec<char> = display.chars().collect();
    if chars.len() <= width {
        return display;
    }
    if parts.inner.is_empty() || mangled {
        let head = (width - 1) / 2 + (width - 1) % 2;
        let tail = width - 1 - head;
        let mut s: String = chars[..head].iter().collect();
        s.push('…');
        s.extend(&chars[chars.len() - tail..]);
        s
    } else {
        let mut s: String = chars[..width - 1].iter().collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortening_is_idempotent() {
        for name in [
            "triton_poi_fused_add_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0",
            "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvSlidingOrChunkedCausalP16VarSeqQ128Kv128PersistentContext",
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
            "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
        ] {
            let once = short_name(name, 60);
            assert_eq!(short_name(&once, 60), once, "{name}");
        }
    }

    fn parts(name: &str) -> (String, String, String) {
        let p = NameParts::parse(name);
        (p.base, p.namespace, p.inner)
    }

    #[test]
    fn demangled_function_with_templates_and_params() {
        let (base, ns, inner) =
            parts("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)");
        assert_eq!(base, "vectorized_elementwise_kernel");
        assert_eq!(ns, "at::native");
        assert!(inner.starts_with("<4, at::native::fillfunctor<int>"), "{inner}");
        assert!(inner.ends_with("1ul>)"), "{inner}");
    }

    #[test]
    fn anonymous_namespace_is_not_a_parameter_list() {
        let (base, ns, _) = parts("void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)");
        assert_eq!(base, "store_kvcache");
        assert_eq!(ns, "(anonymous namespace)");
        let (base, ns, _) = parts(
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float)",
        );
        assert_eq!(base, "vectorized_layer_norm_kernel");
        assert_eq!(ns, "at::native::(anonymous namespace)");
    }

    #[test]
    fn templated_return_type_with_comparison() {
        let (base, ns, inner) = parts("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long)");
        assert_eq!(base, "fused_add_rms_norm_kernel");
        assert_eq!(ns, "vllm");
        assert_eq!(inner, "<c10::bfloat16, 8>(c10::bfloat16*, long)");
    }

    #[test]
    fn plain_symbols_and_parameters_without_void() {
        assert_eq!(parts("nvjet_tst_192x8_64x8_4x1_v_bz_TNT").0, "nvjet_tst_192x8_64x8_4x1_v_bz_tnt");
        let (base, ns, inner) = parts("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
        assert_eq!((base.as_str(), ns.as_str()), ("nccldevkernel_allgather_ring_ll", ""));
        assert_eq!(inner, "(nccldevkernelargsstorage<4096ul>)");
    }

    #[test]
    fn short_names_keep_what_tells_kernels_apart() {
        let cijk_a =
            "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_ISA942_WG32_8_1";
        let cijk_b =
            "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB0_AFC0_ISA942_WG32_4_1";
        let (a, b) = (short_name(cijk_a, 40), short_name(cijk_b, 40));
        assert_eq!(a.chars().count(), 40);
        assert_ne!(a, b);
        assert!(a.starts_with("Cijk_Alik_Bljk_") && a.contains('…'), "{a}");
        let cpp = "void at::native::vectorized_elementwise_kernel<4, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}, at::detail::Array<char*, 2> >(int, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}, at::detail::Array<char*, 2>)";
        let s = short_name(cpp, 60);
        assert!(s.starts_with("vectorized_elementwise_kernel<4, at::native::cos_kernel"), "{s}");
        assert_eq!(s.chars().count(), 60);
        assert_eq!(short_name("attn_fwd", 40), "attn_fwd");
        let mangled = "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i";
        assert_eq!(short_name(mangled, 40), "act_and_mul_kernel<…>");
        // Never longer than asked, whatever the input.
        for n in ["", "<<<<", "void f<", "a(b<c)>", "ü".repeat(100).as_str()] {
            assert!(short_name(n, 10).chars().count() <= 10, "{n}");
        }
    }

    #[test]
    fn mangled_nested_names() {
        let (base, ns, inner) = parts("_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i");
        assert_eq!(base, "act_and_mul_kernel");
        assert_eq!(ns, "sgl_hip::activation");
        assert!(inner.starts_with("i14__hip_bfloat16"));
        let (base, ns, _) = parts("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256EEEvPT0_");
        assert_eq!((base.as_str(), ns.as_str()), ("add_rmsnorm_quant_kernel", "aiter"));
        assert_eq!(parts("_Z4siluIfEvPT_").0, "silu");
    }

    #[test]
    fn broken_mangled_names_fall_back_to_the_text() {
        // Length past the end, zero length, non-ASCII: matched as is.
        assert_eq!(parts("_ZN99abcE").0, "_zn99abce");
        assert_eq!(parts("_ZN0E").0, "_zn0e");
        assert_eq!(parts("_Z3aé").0, "_z3aé");
    }

    #[test]
    fn unbalanced_names_do_not_lose_the_base() {
        let (base, _, inner) = parts("void foo<int, (bar");
        assert_eq!((base.as_str(), inner.as_str()), ("foo", "<int, (bar"));
        assert_eq!(parts("void foo<int>>(x)").0, "void foo<int>>(x)");
        assert_eq!(parts("void foo(int").0, "foo");
        assert_eq!(parts("").0, "");
        assert_eq!(parts("<<<").0, "<<<");
    }
}
