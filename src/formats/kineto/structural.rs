//! Where the bytes that shape JSON lie in a block of 64 bytes of text, as bit masks: quotes,
//! backslashes, opening and closing brackets. The scanner steps over an event it does not read
//! ([`super::scan`]) by its brackets outside strings, found a block at a time from these masks,
//! instead of looking at every byte: strings are the runs between quotes (a prefix XOR of the
//! quote mask), so only the few brackets outside them are visited one by one.
//!
//! Each target compares 16 bytes at once and takes their bit mask in one instruction: SIMD128 on
//! WebAssembly (the page's worker is built with it), SSE2 on x86_64 (part of every x86_64 CPU).
//! Other targets compare a fixed-size array, which the compiler vectorises as it can, and pack
//! each eight 0/1 bytes into eight bits with one multiplication. The tests check every path
//! against a byte-by-byte reading.

/// Bytes in one block.
pub const BLOCK: usize = 64;

/// One block's structural bytes: bit `i` of a mask is byte `i` of the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Masks {
    /// `"`
    pub quote: u64,
    /// `\`
    pub backslash: u64,
    /// `{` or `[`
    pub open: u64,
    /// `}` or `]`
    pub close: u64,
}

/// The masks of `block`.
#[inline]
pub fn masks(block: &[u8; BLOCK]) -> Masks {
    imp::masks(block)
}

/// The index of the first byte at or after `i` that ends a plain run inside a string: `"`, `\\`,
/// a control character or a non-ASCII byte (what the extractor must look at before it can
/// borrow a string as it is). Sixteen bytes at a time.
#[inline]
pub fn string_special(b: &[u8], mut i: usize) -> Option<usize> {
    while let Some(chunk) = b.get(i..).and_then(|rest| rest.first_chunk::<16>()) {
        let found = imp::string_special16(chunk);
        if found != 0 {
            return Some(i + found.trailing_zeros() as usize);
        }
        i += 16;
    }
    portable::string_special(b, i)
}

/// Bit `i` set when an odd number of bits `0..=i` of `x` are: with `x` a block's unescaped
/// quotes, the bits inside strings (each opening quote included, each closing one not).
#[inline]
pub fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod imp {
    use std::arch::wasm32::{i8x16_lt, i8x16_splat, u8x16, u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_or};

    use super::{Masks, BLOCK};

    #[inline]
    fn lane(b: &[u8]) -> v128 {
        u8x16(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }

    #[inline]
    pub fn masks(block: &[u8; BLOCK]) -> Masks {
        let mut m = Masks::default();
        let (quote, backslash) = (u8x16_splat(b'"'), u8x16_splat(b'\\'));
        let (open, close, case) = (u8x16_splat(b'{'), u8x16_splat(b'}'), u8x16_splat(0x20));
        for k in 0..BLOCK / 16 {
            let v = lane(&block[16 * k..16 * k + 16]);
            // `[` and `]` differ from `{` and `}` only in bit 5.
            let folded = v128_or(v, case);
            let bits = |x: v128| u64::from(u8x16_bitmask(x)) << (16 * k);
            m.quote |= bits(u8x16_eq(v, quote));
            m.backslash |= bits(u8x16_eq(v, backslash));
            m.open |= bits(u8x16_eq(folded, open));
            m.close |= bits(u8x16_eq(folded, close));
        }
        m
    }

    /// Bit `i`: byte `i` is `"`, `\\`, below 0x20 or 0x80 and above (negative as a signed byte).
    #[inline]
    pub fn string_special16(chunk: &[u8; 16]) -> u16 {
        let v = lane(chunk);
        let stops = v128_or(
            v128_or(u8x16_eq(v, u8x16_splat(b'"')), u8x16_eq(v, u8x16_splat(b'\\'))),
            i8x16_lt(v, i8x16_splat(0x20)),
        );
        u8x16_bitmask(stops)
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod imp {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_set_epi8,
    };

    use super::{Masks, BLOCK};

    /// Sixteen bytes as one vector (the compiler makes it one unaligned load).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn lane(b: &[u8]) -> __m128i {
        let i = |k: usize| b[k] as i8;
        _mm_set_epi8(
            i(15),
            i(14),
            i(13),
            i(12),
            i(11),
            i(10),
            i(9),
            i(8),
            i(7),
            i(6),
            i(5),
            i(4),
            i(3),
            i(2),
            i(1),
            i(0),
        )
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn masks_sse2(block: &[u8; BLOCK]) -> Masks {
        let mut m = Masks::default();
        let (quote, backslash) = (_mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8));
        let (open, close, case) = (_mm_set1_epi8(b'{' as i8), _mm_set1_epi8(b'}' as i8), _mm_set1_epi8(0x20));
        for k in 0..BLOCK / 16 {
            let v = lane(&block[16 * k..16 * k + 16]);
            // `[` and `]` differ from `{` and `}` only in bit 5.
            let folded = _mm_or_si128(v, case);
            let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16) << (16 * k);
            m.quote |= bits(_mm_cmpeq_epi8(v, quote));
            m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
            m.open |= bits(_mm_cmpeq_epi8(folded, open));
            m.close |= bits(_mm_cmpeq_epi8(folded, close));
        }
        m
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn string_special16_sse2(chunk: &[u8; 16]) -> u16 {
        let v = lane(chunk);
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Signed: bytes of 0x80 and above are negative, so below 0x20 too.
        let control_or_high = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control_or_high)) as u16
    }

    #[inline]
    pub fn masks(block: &[u8; BLOCK]) -> Masks {
        // SAFETY: the function only needs SSE2, which this module is compiled with (the `cfg`
        // above; every x86_64 CPU has it). It reads nothing but `block`, through safe indexing.
        unsafe { masks_sse2(block) }
    }

    /// Bit `i`: byte `i` is `"`, `\\`, below 0x20 or 0x80 and above.
    #[inline]
    pub fn string_special16(chunk: &[u8; 16]) -> u16 {
        // SAFETY: as for `masks`: SSE2 only, and nothing read but `chunk`.
        unsafe { string_special16_sse2(chunk) }
    }
}

#[cfg(not(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    all(target_arch = "x86_64", target_feature = "sse2")
)))]
mod imp {
    pub use super::portable::masks;

    pub fn string_special16(chunk: &[u8; 16]) -> u16 {
        chunk.iter().enumerate().fold(0, |m, (i, &c)| m | u16::from(super::portable::is_string_special(c)) << i)
    }
}

/// The masks without SIMD instructions: the fallback of other targets, and the tests' check of
/// the vector paths.
#[cfg_attr(
    any(all(target_arch = "wasm32", target_feature = "simd128"), all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code)
)]
mod portable {
    use super::{Masks, BLOCK};

    /// Eight bytes of 0 or 1 (little-endian) into eight bits: the products of the multiplier's
    /// bytes land each byte's bit in the top byte, with no carries between them.
    #[inline]
    fn mask(hits: &[u8; BLOCK]) -> u64 {
        let mut m = 0u64;
        for k in 0..BLOCK / 8 {
            let eight: [u8; 8] = hits[8 * k..8 * k + 8].try_into().unwrap_or_default();
            m |= (u64::from_le_bytes(eight).wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
        }
        m
    }

    #[inline]
    pub fn masks(block: &[u8; BLOCK]) -> Masks {
        let (mut quote, mut backslash, mut open, mut close) = ([0u8; BLOCK], [0u8; BLOCK], [0u8; BLOCK], [0u8; BLOCK]);
        for i in 0..BLOCK {
            let b = block[i];
            // `[` and `]` differ from `{` and `}` only in bit 5.
            let folded = b | 0x20;
            quote[i] = u8::from(b == b'"');
            backslash[i] = u8::from(b == b'\\');
            open[i] = u8::from(folded == b'{');
            close[i] = u8::from(folded == b'}');
        }
        Masks { quote: mask(&quote), backslash: mask(&backslash), open: mask(&open), close: mask(&close) }
    }

    #[inline]
    pub fn is_string_special(c: u8) -> bool {
        c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c)
    }

    /// [`super::string_special`] eight bytes at a time in a `u64`, then byte by byte.
    #[inline]
    pub fn string_special(b: &[u8], mut i: usize) -> Option<usize> {
        const ONES: u64 = u64::MAX / 255;
        const HIGH: u64 = ONES << 7;
        while let Some(word) = b.get(i..).and_then(|rest| rest.first_chunk::<8>()) {
            let x = u64::from_le_bytes(*word);
            let quote = x ^ (ONES * u64::from(b'"'));
            let backslash = x ^ (ONES * u64::from(b'\\'));
            // A byte's high bit set in `found` for a zero byte of `quote` or `backslash`, a byte
            // below 0x20, or a byte of 0x80 or more (the lowest flagged byte is always a real one).
            let found = (quote.wrapping_sub(ONES) & !quote)
                | (backslash.wrapping_sub(ONES) & !backslash)
                | (x.wrapping_sub(ONES * 0x20) & !x)
                | x;
            let found = found & HIGH;
            if found != 0 {
                return Some(i + (found.trailing_zeros() / 8) as usize);
            }
            i += 8;
        }
        b.get(i..)?.iter().position(|&c| is_string_special(c)).map(|p| i + p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(block: &[u8; BLOCK]) -> Masks {
        let mut m = Masks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'"' => m.quote |= bit,
                b'\\' => m.backslash |= bit,
                b'{' | b'[' => m.open |= bit,
                b'}' | b']' => m.close |= bit,
                _ => {}
            }
        }
        m
    }

    /// Bytes drawn mostly from those the masks look for and their neighbours in bit 5.
    fn byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            prop::sample::select(b"\"\\{}[]{}[]\x02\x5b\x5d\x7b\x7d\x3b\x3d\x7f\xff\x80 ax:,".to_vec()),
            any::<u8>(),
        ]
    }

    proptest! {
        #[test]
        fn masks_match_a_byte_by_byte_reading(bytes in prop::collection::vec(byte(), BLOCK)) {
            let block: [u8; BLOCK] = bytes.try_into().unwrap();
            prop_assert_eq!(masks(&block), reference(&block));
            prop_assert_eq!(portable::masks(&block), reference(&block));
        }

        #[test]
        fn prefix_xor_is_the_running_parity(x in any::<u64>()) {
            let mut parity = 0u64;
            let mut expected = 0u64;
            for i in 0..64 {
                parity ^= (x >> i) & 1;
                expected |= parity << i;
            }
            prop_assert_eq!(prefix_xor(x), expected);
        }
    }

    fn reference_special(b: &[u8], i: usize) -> Option<usize> {
        (i..b.len()).find(|&k| b[k] == b'"' || b[k] == b'\\' || b[k] < 0x20 || b[k] >= 0x80)
    }

    proptest! {
        #[test]
        fn string_specials_are_found_where_a_byte_by_byte_search_finds_them(
            bytes in prop::collection::vec(prop_oneof![8 => 0x20u8..0x7f, 1 => any::<u8>()], 0..80),
            from in 0usize..80,
        ) {
            let from = from.min(bytes.len());
            prop_assert_eq!(string_special(&bytes, from), reference_special(&bytes, from));
            prop_assert_eq!(portable::string_special(&bytes, from), reference_special(&bytes, from));
        }
    }

    #[test]
    fn every_byte_value_alone() {
        for v in 0..=255u8 {
            let mut block = [b'a'; BLOCK];
            block[37] = v;
            block[0] = v;
            block[63] = v;
            assert_eq!(masks(&block), reference(&block), "byte {v:#04x}");
            assert_eq!(portable::masks(&block), reference(&block), "byte {v:#04x}");
            for at in [0, 7, 15, 16, 40] {
                let mut text = [b'a'; 48];
                text[at] = v;
                assert_eq!(string_special(&text, 0), reference_special(&text, 0), "byte {v:#04x} at {at}");
            }
        }
    }
}
