//! Typed, borrowing reads of a harness's JSON lines that answer exactly as `serde_json::Value`'s
//! accessors would (`as_str`, `as_u64`, `as_f64`, `as_bool`, `is_null`, `as_object`,
//! `as_array`), without building a `Value` tree.
//!
//! Why: a driver reads a handful of members of each line, and building the whole tree (every key
//! and string allocated, every object a hash map) was most of a `parse` call's guest time. A
//! driver declares a `#[derive(Deserialize)]` struct of the members it reads, each one a
//! [`Field`], [`Obj`] or [`Arr`]; serde_json skips every other member without allocating, and a
//! string without escapes is borrowed from the line.
//!
//! A member of the wrong JSON type reads as absent, as `Value`'s accessors give `None`; it never
//! fails the line. Two differences from a `Value` tree, both on JSON no harness prints:
//! - an object the driver reads (the line itself, or a nested [`Obj`]) with the same member twice
//!   fails to deserialize (serde's derive refuses duplicate fields), so the driver reports such a
//!   line as unreadable where `Value` kept the last one; harnesses' serializers never repeat a key;
//! - a member the driver does not read is skipped, checked only for JSON syntax: nested deeper
//!   than serde_json's recursion limit (128), a number beyond f64 or a lone surrogate escape there
//!   no longer makes the whole line unreadable (skipping is iterative: no stack is at risk).

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// One member read leniently: its scalar value, or only the fact that it is an object or array.
///
/// Kept small (16 bytes on wasm32, where a `Cow<str>` payload made it 24): a line's struct holds
/// one per member it reads and is moved several times between serde_json and the driver, and on
/// wasm32 each move is a `memcpy` loop in the guest.
#[derive(Debug, Clone, Default)]
pub enum Field<'a> {
    /// Absent or JSON `null`.
    #[default]
    Null,
    Bool(bool),
    /// A non-negative integer that fits a u64.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// Any other number.
    F64(f64),
    /// A string borrowed from the line (it held no escapes).
    Str(&'a str),
    /// A string that held escapes, unescaped.
    Owned(Box<str>),
    /// An object or an array, skipped unread.
    Other,
}

/// Equal as the JSON values they read: a borrowed and an unescaped string with the same text are
/// the same string.
impl PartialEq for Field<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self.as_str(), other.as_str()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => match (self, other) {
                (Field::Null, Field::Null) | (Field::Other, Field::Other) => true,
                (Field::Bool(a), Field::Bool(b)) => a == b,
                (Field::U64(a), Field::U64(b)) => a == b,
                (Field::I64(a), Field::I64(b)) => a == b,
                (Field::F64(a), Field::F64(b)) => a == b,
                _ => false,
            },
            _ => false,
        }
    }
}

impl<'a> Field<'a> {
    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            Field::Owned(s) => Some(s),
            _ => None,
        }
    }

    /// The string as an owned `String`, without a copy when unescaping already made one.
    #[inline]
    pub fn into_string(self) -> Option<String> {
        match self {
            Field::Str(s) => Some(owned(s)),
            Field::Owned(s) => Some(s.into_string()),
            _ => None,
        }
    }

    /// [`Field::into_string`] of the member, leaving `Null` in its place.
    #[inline]
    pub fn take_string(&mut self) -> Option<String> {
        core::mem::take(self).into_string()
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Field::U64(n) => Some(*n),
            _ => None,
        }
    }

    /// As `Value::as_i64`: any integer that fits an i64, never a float.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Field::U64(n) => i64::try_from(*n).ok(),
            Field::I64(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Field::U64(n) => Some(*n as f64),
            Field::I64(n) => Some(*n as f64),
            Field::F64(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Field::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Present with any value but `null`.
    pub fn is_set(&self) -> bool {
        !matches!(self, Field::Null)
    }
}

/// `s` as an owned `String`, one of at most 64 bytes copied as a few overlapping words: `to_owned`'s
/// copy is a `memory.copy`, which wasmtime runs as a call out of the guest code (a libcall that
/// looks the memory up each time), dearer than the few words of a short string an event carries.
/// Its block is taken from the allocator directly (`small_alloc::alloc_bytes`).
pub(crate) fn owned(s: &str) -> String {
    let n = s.len();
    if n > 64 {
        return s.to_owned();
    }
    if n == 0 {
        return String::new();
    }
    // SAFETY: the block is the global allocator's, of `n` bytes with alignment 1 (what a `String`
    // of capacity `n` owns), and `copy_short` writes exactly `s`'s `n` bytes into it, so they are
    // initialised and UTF-8.
    unsafe {
        let ptr = crate::small_alloc::alloc_bytes(n);
        if ptr.is_null() {
            std::alloc::handle_alloc_error(std::alloc::Layout::from_size_align_unchecked(n, 1));
        }
        copy_short(s.as_ptr(), ptr, n);
        String::from_raw_parts(ptr, n, n)
    }
}

/// Copies `n <= 64` bytes from `src` to `dst` (not overlapping) without a loop, so LLVM keeps it
/// as loads and stores: the first and the last words of each size cover every byte.
#[inline(always)]
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    let load = |at: usize| (src.add(at) as *const u64).read_unaligned();
    let store = |at: usize, word: u64| (dst.add(at) as *mut u64).write_unaligned(word);
    if n >= 32 {
        let (a, b, c, d) = (load(0), load(8), load(16), load(24));
        let (e, f, g, h) = (load(n - 32), load(n - 24), load(n - 16), load(n - 8));
        store(0, a);
        store(8, b);
        store(16, c);
        store(24, d);
        store(n - 32, e);
        store(n - 24, f);
        store(n - 16, g);
        store(n - 8, h);
    } else if n >= 16 {
        let (a, b, c, d) = (load(0), load(8), load(n - 16), load(n - 8));
        store(0, a);
        store(8, b);
        store(n - 16, c);
        store(n - 8, d);
    } else if n >= 8 {
        let (a, b) = (load(0), load(n - 8));
        store(0, a);
        store(n - 8, b);
    } else if n >= 4 {
        let (a, b) = ((src as *const u32).read_unaligned(), (src.add(n - 4) as *const u32).read_unaligned());
        (dst as *mut u32).write_unaligned(a);
        (dst.add(n - 4) as *mut u32).write_unaligned(b);
    } else if n > 0 {
        *dst = *src;
        *dst.add(n / 2) = *src.add(n / 2);
        *dst.add(n - 1) = *src.add(n - 1);
    }
}

struct FieldVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for FieldVisitor<'a> {
    type Value = Field<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Field<'a>, E> {
        Ok(Field::Bool(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Field<'a>, E> {
        Ok(Field::U64(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Field<'a>, E> {
        // `Value` stores a non-negative i64 as a u64, so `as_u64` answers for it.
        Ok(if v >= 0 { Field::U64(v as u64) } else { Field::I64(v) })
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Field<'a>, E> {
        Ok(Field::F64(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Field<'a>, E> {
        Ok(Field::Str(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Field<'a>, E> {
        Ok(Field::Owned(v.into()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Field<'a>, E> {
        Ok(Field::Owned(v.into_boxed_str()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Field<'a>, E> {
        Ok(Field::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Field<'a>, E> {
        Ok(Field::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field<'a>, A::Error> {
        skip_seq(seq).map(|_| Field::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field<'a>, A::Error> {
        skip_map(map).map(|_| Field::Other)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Field<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor(PhantomData))
    }
}

fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A member read as the struct `T` when it is a JSON object, else absent (as `Value::as_object`).
#[derive(Debug, Clone, PartialEq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<T> Obj<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

struct ObjVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Obj<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Obj<T>, A::Error> {
        skip_seq(seq).map(|_| Obj(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(PhantomData))
    }
}

/// A member read as a list of `T` when it is a JSON array, else absent (as `Value::as_array`).
#[derive(Debug, Clone, PartialEq)]
pub struct Arr<T>(pub Option<Vec<T>>);

impl<T> Default for Arr<T> {
    fn default() -> Self {
        Arr(None)
    }
}

impl<T> Arr<T> {
    pub fn get(&self) -> Option<&[T]> {
        self.0.as_deref()
    }
}

struct ArrVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ArrVisitor<T> {
    type Value = Arr<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Arr<T>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Arr(Some(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Arr<T>, A::Error> {
        skip_map(map).map(|_| Arr(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Arr<T>, E> {
        Ok(Arr(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Arr<T>, E> {
        Ok(Arr(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Arr<T>, E> {
        Ok(Arr(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Arr<T>, E> {
        Ok(Arr(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Arr<T>, E> {
        Ok(Arr(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Arr<T>, E> {
        Ok(Arr(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Arr<T>, E> {
        Ok(Arr(None))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Arr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArrVisitor(PhantomData))
    }
}

/// A member whose presence matters apart from its type (as `Value::get` tells `None` from
/// `Some(non-object)`): absent, an object read as `T`, or present with any other value, `null`
/// included.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Member<T> {
    #[default]
    Absent,
    Object(T),
    Other,
}

impl<T> Member<T> {
    pub fn object(&self) -> Option<&T> {
        match self {
            Member::Object(t) => Some(t),
            _ => None,
        }
    }

    pub fn is_present(&self) -> bool {
        !matches!(self, Member::Absent)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Member<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through `Obj`'s visitor: an object is `T`, anything else (null too, since a present
        // member reaches here only when it is in the line) skipped.
        match d.deserialize_any(ObjVisitor(PhantomData))? {
            Obj(Some(t)) => Ok(Member::Object(t)),
            Obj(None) => Ok(Member::Other),
        }
    }
}

/// A member kept whole as a `serde_json::Value` (for what a driver reports as JSON text: a tool
/// call's input), present even when it is `null`, so `None` means absent as `Value::get` does.
/// Only lines that have the member pay for its tree.
#[derive(Debug, Clone, PartialEq, Default)]
///
/// Boxed: a `Value` (48 bytes on wasm32, an ordered map inline) would make every line's struct
/// larger, and most lines do not carry the member.
pub struct Json(pub Option<Box<serde_json::Value>>);

impl Json {
    pub fn get(&self) -> Option<&serde_json::Value> {
        self.0.as_deref()
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(|v| Json(Some(Box::new(v))))
    }
}

/// Reads `line` as the struct `T` when it is a JSON object; `None` for anything else (not JSON,
/// another JSON type, trailing characters, a duplicated member of a struct `T` reads).
pub fn object_line<'a, T: Deserialize<'a>>(line: &'a str) -> Option<T> {
    // A derived struct would also accept a JSON array as its fields in order; a line is an object.
    if !line.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{') {
        return None;
    }
    serde_json::from_str(line).ok()
}

/// A struct read in place, member by member, instead of through `#[derive(Deserialize)]`: the
/// derived visitor keeps an `Option` of every member, fills the missing ones from a whole default
/// struct and moves the finished struct out through `Result` and `Option`; for a line of a few
/// dozen bytes those moves (each a `memory.copy` on wasm32) and the members' name comparisons cost
/// about what serde_json's reading of the line does (issue #15, `jsonl`'s profile).
///
/// Reads as the derived struct with `#[serde(default)]` would: a member named twice fails the
/// read; a member the struct does not name is skipped unread; a name with escapes is matched
/// unescaped.
pub trait ReadInPlace<'de> {
    /// The index (below 64) of the member called `name`, or `None` to skip it.
    fn member_index(name: &str) -> Option<u32>;
    /// Reads member `index`'s value from `map` into `self`.
    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error>;

    /// Member `index` when it is a plain [`Field`] that `read_member` reads as
    /// `*field = map.next_value()?`: the fast path (`fast`) then reads the value straight into it
    /// without going through `read_member`. `None` (the default) for every other member.
    #[inline(always)]
    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        let _ = index;
        None
    }

    /// Member `index` when it is a [`Nested`] that `read_member` reads as
    /// `map.next_value_seed(&mut nested)`: the fast path then reads an object's members straight
    /// into it (`fast::nested`). `None` (the default) for every other member.
    #[inline(always)]
    fn nested(&mut self, index: u32) -> Option<&mut dyn crate::fast::NestedInPlace<'de>> {
        let _ = index;
        None
    }
}

struct NameSeed<T>(PhantomData<T>);

impl<'de, T: ReadInPlace<'de>> de::DeserializeSeed<'de> for NameSeed<T> {
    type Value = Option<u32>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<u32>, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de, T: ReadInPlace<'de>> Visitor<'de> for NameSeed<T> {
    type Value = Option<u32>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<u32>, E> {
        Ok(T::member_index(v))
    }
}

struct InPlaceVisitor<'t, T>(&'t mut T);

impl<'de, 't, T: ReadInPlace<'de>> Visitor<'de> for InPlaceVisitor<'t, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        read_members(self.0, &mut map)
    }
}

/// Reads an object's members from `map` into `target` (see [`ReadInPlace`]): a member named twice
/// is an error, a member `T` does not name is skipped. For a line's object and for nested objects
/// read in place, by serde_json and by the fast path (`fast`) alike.
pub fn read_members<'de, T: ReadInPlace<'de>, A: MapAccess<'de>>(target: &mut T, map: &mut A) -> Result<(), A::Error> {
    let mut seen: u64 = 0;
    while let Some(name) = map.next_key_seed(NameSeed::<T>(PhantomData))? {
        match name {
            Some(index) => {
                let bit = 1u64 << index;
                if seen & bit != 0 {
                    return Err(de::Error::custom("duplicate member"));
                }
                seen |= bit;
                target.read_member(index, map)?;
            }
            None => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(())
}

/// A nested object read in place, as a line's top-level object is ([`ReadInPlace`]): the parent
/// holds the struct inline and it is filled member by member, where a derived visitor kept an
/// `Option` of every member, built the struct, and moved it out through `Result`, [`Obj`] and
/// `Option` into its parent (on wasm32 each move a `memory.copy`, and each member name matched
/// with `memcmp`). Reads as `Obj<T>` of a derived `#[serde(default)]` struct does: a JSON object is
/// read into `T` (a member named twice fails the line, a member `T` does not name is skipped
/// unread, an escaped name is matched unescaped); any other JSON value is skipped and the member
/// reads as absent. First written for `claude-code`'s nested objects; `codex` reads its `item` and
/// `usage` this way.
///
/// A member that is a JSON object read in place into `T`; absent when it was not an object (or
/// not in the line), as `Obj<T>` is `Obj(None)`. Like [`Member`] it also tells a member that is
/// present with another value (`null` included) from an absent one ([`Nested::is_present`]).
#[derive(Default)]
pub struct Nested<T> {
    pub(crate) state: NestedState,
    pub(crate) value: T,
}

#[derive(Default, Clone, Copy, PartialEq)]
pub(crate) enum NestedState {
    #[default]
    Absent,
    Object,
    Other,
}

impl<T> Nested<T> {
    pub fn get(&self) -> Option<&T> {
        if self.state == NestedState::Object {
            Some(&self.value)
        } else {
            None
        }
    }

    pub fn get_mut(&mut self) -> Option<&mut T> {
        if self.state == NestedState::Object {
            Some(&mut self.value)
        } else {
            None
        }
    }

    /// In the line with any value, as [`Member::is_present`].
    pub fn is_present(&self) -> bool {
        self.state != NestedState::Absent
    }
}

/// `map.next_value_seed(&mut nested)` reads the member's value into `nested`.
impl<'de, 'n, T: ReadInPlace<'de>> DeserializeSeed<'de> for &'n mut Nested<T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(NestedVisitor(self))
    }
}

struct NestedVisitor<'n, T>(&'n mut Nested<T>);

impl<'de, 'n, T: ReadInPlace<'de>> Visitor<'de> for NestedVisitor<'n, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        read_members(&mut self.0.value, &mut map)?;
        self.0.state = NestedState::Object;
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        self.0.state = NestedState::Other;
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.0.state = NestedState::Other;
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.0.state = NestedState::Other;
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.0.state = NestedState::Other;
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.0.state = NestedState::Other;
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.0.state = NestedState::Other;
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.state = NestedState::Other;
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.0.state = NestedState::Other;
        Ok(())
    }
}

/// Reads the JSON object `line` into `target` (see [`ReadInPlace`]); `false` for anything
/// [`object_line`] refuses (then `target` may hold part of the line: reset it before reuse).
pub fn object_line_into<'a, T: ReadInPlace<'a>>(line: &'a str, target: &mut T) -> bool {
    if !line.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{') {
        return false;
    }
    let mut d = serde_json::Deserializer::from_str(line);
    d.deserialize_map(InPlaceVisitor(target)).is_ok() && d.end().is_ok()
}

/// Whether the member name `name` is `expected`, compared eight bytes at a time: `==` on short
/// strings is a call to `memcmp` on wasm32 (a byte loop in guest code), and a line's every member
/// name goes through [`ReadInPlace::member_index`].
#[inline(always)]
pub fn name_is(name: &str, expected: &str) -> bool {
    let (a, b) = (name.as_bytes(), expected.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i + 8 <= a.len() {
        let x = u64::from_le_bytes([a[i], a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5], a[i + 6], a[i + 7]]);
        let y = u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]]);
        if x != y {
            return false;
        }
        i += 8;
    }
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
