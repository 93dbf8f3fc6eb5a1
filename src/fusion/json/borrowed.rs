use std::borrow::Cow;

use serde::Deserialize;

#[derive(Deserialize)]
pub(super) struct FileOp<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(borrow)]
    pub op_type: Cow<'a, str>,
    #[serde(default, borrow)]
    pub inputs: Few<Name<'a>>,
    #[serde(borrow)]
    pub output: Cow<'a, str>,
    pub shape: Few<i64>,
    pub bytes_per_element: i64,
}

/// A list read as a `Vec` is (same messages: `expected a sequence`), but held in place
/// up to [`INLINE`] items: an op's inputs and shape are short, and a million ops
/// would otherwise be two million small allocations, and as many frees.
#[derive(Debug, Default)]
pub(super) struct Few<T> {
    len: usize,
    inline: [T; INLINE],
    more: Vec<T>,
}

/// Items a [`Few`] holds in place.
const INLINE: usize = 4;

impl<T> Few<T> {
    pub fn as_slice(&self) -> &[T] {
        if self.len <= INLINE {
            &self.inline[..self.len]
        } else {
            &self.more
        }
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Few<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Items<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Default> serde::de::Visitor<'de> for Items<T> {
            type Value = Few<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Few<T>, A::Error> {
                let mut few = Few::<T>::default();
                while let Some(item) = seq.next_element()? {
                    if few.len < INLINE {
                        few.inline[few.len] = item;
                    } else {
                        if few.len == INLINE {
                            few.more.extend(few.inline.iter_mut().map(std::mem::take));
                        }
                        few.more.push(item);
                    }
                    few.len += 1;
                }
                Ok(few)
            }
        }
        d.deserialize_seq(Items(std::marker::PhantomData))
    }
}

/// A tensor name in a list or as a key, borrowed like [`FileOp`]'s names (`Cow` borrows
/// only where serde is told to, which a `Vec` or map element cannot be told directly).
#[derive(Deserialize, Default, PartialEq, Eq, PartialOrd, Ord)]
#[serde(transparent)]
pub(super) struct Name<'a>(#[serde(borrow)] pub Cow<'a, str>);
