//! A fast path for reading a line: a JSON reader for the common shape of harness lines that scans
//! strings eight bytes at a time, in front of `serde_json`.
//!
//! Why: after the lines were read in place, most of the guest's time per line was serde_json
//! 1.0.87's string scan (`parse_str`, `ignore_str`), a loop of one table lookup per byte (on
//! wasm32 a load, a table load, a compare and a bounds check each): a line is mostly strings, and
//! most of its bytes are in members the driver skips. Here a string is scanned as 64-bit words
//! (a word without a quote, backslash or control byte is skipped in one step).
//!
//! It is only a fast path: it implements serde's `Deserializer` for what the driver's types ask
//! (`deserialize_any`, `deserialize_ignored_any`, and member names), making the same visitor calls
//! `serde_json` makes, and it gives up ([`Bail`]) on anything it does not read exactly as
//! `serde_json` does: a float or an integer of more than 18 digits that the driver reads, `-0`, a
//! `\u` escape of a surrogate in a string the driver reads, nesting deeper than [`MAX_DEPTH`], and
//! every syntax error. The caller then reads the line again with `serde_json` from scratch
//! (`lenient::object_line_into`), so every line reads as before; the fast path only has to never
//! accept what `serde_json` refuses and to read what it accepts into the same values.

use crate::nested::read_members;
use murmur_driver_abi::lenient::ReadInPlace;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Deeper than this (objects and arrays, the line's own object included) the fast path gives up;
/// `serde_json` allows 128 for what it reads and any depth for what it skips.
pub const MAX_DEPTH: u32 = 100;

/// The fast path gave up: read the line with `serde_json`.
#[derive(Debug)]
pub struct Bail;

impl fmt::Display for Bail {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("not read by the fast path")
    }
}

impl std::error::Error for Bail {}

impl de::Error for Bail {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Bail
    }
}

/// Reads the JSON object `line` into `target` as `lenient::object_line_into` does; `Err` when the
/// fast path gives up (then `target` may hold part of the line: read it again from a fresh one).
/// `scratch` holds the unescaped text of strings with escapes, kept by the caller from line to
/// line so it is allocated once.
pub fn read_line<'de, T: ReadInPlace<'de>>(line: &'de str, target: &mut T, scratch: &mut Vec<u8>) -> Result<(), Bail> {
    let mut r = Reader { src: line, pos: 0, depth: 1, scratch: std::mem::take(scratch) };
    let read = r.object_line(target);
    *scratch = r.scratch;
    read
}

pub struct Reader<'de> {
    src: &'de str,
    pos: usize,
    /// Objects and arrays open at `pos`.
    depth: u32,
    /// The unescaped text of the last string that held escapes.
    scratch: Vec<u8>,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// A mask whose lowest set bit is the high bit of the word's first byte that is `"`, `\` or
/// below 0x20 (what ends a plain run of a JSON string), zero when there is none: the classic
/// zero-byte and less-than tests, whose lowest flag is exact (a borrow only flags bytes above a
/// true one).
#[inline(always)]
fn special_mask(x: u64) -> u64 {
    let quote = x ^ (ONES * b'"' as u64);
    let backslash = x ^ (ONES * b'\\' as u64);
    ((quote.wrapping_sub(ONES) & !quote) | (backslash.wrapping_sub(ONES) & !backslash) | (x.wrapping_sub(ONES * 0x20) & !x))
        & HIGH
}

fn hex(b: u8) -> Option<u32> {
    match b {
        b'0'..=b'9' => Some((b - b'0') as u32),
        b'a'..=b'f' => Some((b - b'a' + 10) as u32),
        b'A'..=b'F' => Some((b - b'A' + 10) as u32),
        _ => None,
    }
}

impl<'de> Reader<'de> {
    fn object_line<T: ReadInPlace<'de>>(&mut self, target: &mut T) -> Result<(), Bail> {
        if self.peek_ws() != Some(b'{') {
            return Err(Bail);
        }
        self.pos += 1;
        read_members(target, &mut Map { r: self, first: true })?;
        self.end(b'}')?;
        match self.peek_ws() {
            None => Ok(()),
            Some(_) => Err(Bail),
        }
    }

    #[inline]
    fn bytes(&self) -> &'de [u8] {
        self.src.as_bytes()
    }

    /// The next byte that is not JSON whitespace, not consumed.
    #[inline]
    fn peek_ws(&mut self) -> Option<u8> {
        let b = self.bytes();
        while self.pos < b.len() {
            match b[self.pos] {
                b' ' | b'\n' | b'\t' | b'\r' => self.pos += 1,
                c => return Some(c),
            }
        }
        None
    }

    /// The index of the first `"`, `\` or control byte at or after `i`, or the end: eight bytes
    /// a step, the last few through a copy padded with quotes.
    #[inline(always)]
    fn scan(&self, mut i: usize) -> usize {
        let b = self.bytes();
        loop {
            let word = if i + 8 <= b.len() {
                u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]])
            } else if i < b.len() {
                let mut padded = [b'"'; 8];
                padded[..b.len() - i].copy_from_slice(&b[i..]);
                u64::from_le_bytes(padded)
            } else {
                return b.len();
            };
            let mask = special_mask(word);
            if mask != 0 {
                return (i + (mask.trailing_zeros() / 8) as usize).min(b.len());
            }
            i += 8;
        }
    }

    /// Four hex digits at `pos`, consumed.
    fn hex4(&mut self) -> Result<u32, Bail> {
        let b = self.bytes();
        if self.pos + 4 > b.len() {
            return Err(Bail);
        }
        let mut n = 0;
        for k in 0..4 {
            n = n * 16 + hex(b[self.pos + k]).ok_or(Bail)?;
        }
        self.pos += 4;
        Ok(n)
    }

    /// A string after its opening quote, consumed with its closing one: `Some` borrowed from the
    /// line when it held no escapes, else `None` and the unescaped text in `scratch`.
    fn string(&mut self) -> Result<Option<&'de str>, Bail> {
        let b = self.bytes();
        let start = self.pos;
        let mut i = self.scan(start);
        if i < b.len() && b[i] == b'"' {
            self.pos = i + 1;
            // Both ends are ASCII, so char boundaries.
            return self.src.get(start..i).map(Some).ok_or(Bail);
        }
        self.scratch.clear();
        let mut run = start;
        loop {
            if i >= b.len() {
                return Err(Bail);
            }
            self.scratch.extend_from_slice(&b[run..i]);
            match b[i] {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(None);
                }
                b'\\' => {
                    if i + 1 >= b.len() {
                        return Err(Bail);
                    }
                    self.pos = i + 2;
                    let unescaped = match b[i + 1] {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => b'\x08',
                        b'f' => b'\x0c',
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let n = self.hex4()?;
                            // A surrogate (paired or not) is left to serde_json.
                            let c = char::from_u32(n).ok_or(Bail)?;
                            let mut buf = [0u8; 4];
                            self.scratch.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                            run = self.pos;
                            i = self.scan(run);
                            continue;
                        }
                        _ => return Err(Bail),
                    };
                    self.scratch.push(unescaped);
                    run = self.pos;
                    i = self.scan(run);
                }
                _ => return Err(Bail),
            }
        }
    }

    /// Skips a string after its opening quote, checking it as serde_json's `ignore_str` does.
    fn skip_string(&mut self) -> Result<(), Bail> {
        let b = self.bytes();
        let mut i = self.scan(self.pos);
        loop {
            if i >= b.len() {
                return Err(Bail);
            }
            match b[i] {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(());
                }
                b'\\' => {
                    if i + 1 >= b.len() {
                        return Err(Bail);
                    }
                    self.pos = i + 2;
                    match b[i + 1] {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        // Any four hex digits, as serde_json skips them.
                        b'u' => {
                            self.hex4()?;
                        }
                        _ => return Err(Bail),
                    }
                    i = self.scan(self.pos);
                }
                _ => return Err(Bail),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let b = self.bytes();
        let start = self.pos;
        while self.pos < b.len() && b[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Skips a number at `pos` by JSON's grammar, as serde_json's `ignore_integer` does.
    fn skip_number(&mut self) -> Result<(), Bail> {
        let b = self.bytes();
        if b[self.pos] == b'-' {
            self.pos += 1;
        }
        let first = *b.get(self.pos).ok_or(Bail)?;
        let n = self.digits();
        if n == 0 || (first == b'0' && n > 1) {
            return Err(Bail);
        }
        if self.pos < b.len() && b[self.pos] == b'.' {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(Bail);
            }
        }
        if self.pos < b.len() && (b[self.pos] == b'e' || b[self.pos] == b'E') {
            self.pos += 1;
            if self.pos < b.len() && (b[self.pos] == b'+' || b[self.pos] == b'-') {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(Bail);
            }
        }
        Ok(())
    }

    /// `null`, `true` or `false` at `pos`, consumed.
    fn literal(&mut self, word: &[u8]) -> Result<(), Bail> {
        if self.bytes()[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Bail)
        }
    }

    fn enter(&mut self) -> Result<(), Bail> {
        if self.depth >= MAX_DEPTH {
            return Err(Bail);
        }
        self.depth += 1;
        self.pos += 1;
        Ok(())
    }

    /// The closing `]` or `}` of the innermost array or object, after its last member.
    fn end(&mut self, close: u8) -> Result<(), Bail> {
        if self.peek_ws() != Some(close) {
            return Err(Bail);
        }
        self.pos += 1;
        self.depth -= 1;
        Ok(())
    }

    /// Skips any JSON value.
    fn skip_value(&mut self) -> Result<(), Bail> {
        match self.peek_ws().ok_or(Bail)? {
            b'"' => {
                self.pos += 1;
                self.skip_string()
            }
            b'-' | b'0'..=b'9' => self.skip_number(),
            b'n' => self.literal(b"null"),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'[' => {
                self.enter()?;
                if self.peek_ws() != Some(b']') {
                    loop {
                        self.skip_value()?;
                        match self.peek_ws() {
                            Some(b',') => self.pos += 1,
                            _ => break,
                        }
                    }
                }
                self.end(b']')
            }
            b'{' => {
                self.enter()?;
                if self.peek_ws() != Some(b'}') {
                    loop {
                        if self.peek_ws() != Some(b'"') {
                            return Err(Bail);
                        }
                        self.pos += 1;
                        self.skip_string()?;
                        if self.peek_ws() != Some(b':') {
                            return Err(Bail);
                        }
                        self.pos += 1;
                        self.skip_value()?;
                        match self.peek_ws() {
                            Some(b',') => self.pos += 1,
                            _ => break,
                        }
                    }
                }
                self.end(b'}')
            }
            _ => Err(Bail),
        }
    }

    /// An integer the driver reads, as serde_json gives it: `visit_u64` for one that is not
    /// negative, `visit_i64` for a negative one; anything else is left to serde_json.
    fn number<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, Bail> {
        let b = self.bytes();
        let negative = b[self.pos] == b'-';
        if negative {
            self.pos += 1;
        }
        let start = self.pos;
        let n = self.digits();
        if n == 0 || n > 18 || (b[start] == b'0' && n > 1) {
            return Err(Bail);
        }
        if self.pos < b.len() && matches!(b[self.pos], b'.' | b'e' | b'E') {
            return Err(Bail);
        }
        let mut value: u64 = 0;
        for &d in &b[start..self.pos] {
            value = value * 10 + (d - b'0') as u64;
        }
        if !negative {
            visitor.visit_u64(value)
        } else if value == 0 {
            // serde_json reads `-0` as a float.
            Err(Bail)
        } else {
            visitor.visit_i64(-(value as i64))
        }
    }
}

/// Refuses every way of reading a value but the ones the driver's types use.
macro_rules! bail {
    ($($name:ident)*) => {
        $(fn $name<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Bail> {
            Err(Bail)
        })*
    };
}

impl<'de, 'r> Deserializer<'de> for &'r mut Reader<'de> {
    type Error = Bail;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        match self.peek_ws().ok_or(Bail)? {
            b'"' => {
                self.pos += 1;
                match self.string()? {
                    Some(s) => visitor.visit_borrowed_str(s),
                    None => visitor.visit_str(std::str::from_utf8(&self.scratch).map_err(|_| Bail)?),
                }
            }
            b'-' | b'0'..=b'9' => self.number(visitor),
            b'n' => {
                self.literal(b"null")?;
                visitor.visit_unit()
            }
            b't' => {
                self.literal(b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                visitor.visit_bool(false)
            }
            b'[' => {
                self.enter()?;
                let value = visitor.visit_seq(Seq { r: &mut *self, first: true })?;
                self.end(b']')?;
                Ok(value)
            }
            b'{' => {
                self.enter()?;
                let value = visitor.visit_map(Map { r: &mut *self, first: true })?;
                self.end(b'}')?;
                Ok(value)
            }
            _ => Err(Bail),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        self.skip_value()?;
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, _: usize, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    bail! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_u8
        deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf deserialize_option
        deserialize_unit deserialize_seq deserialize_map deserialize_identifier
    }
}

struct Seq<'a, 'de> {
    r: &'a mut Reader<'de>,
    first: bool,
}

impl<'de, 'a> SeqAccess<'de> for Seq<'a, 'de> {
    type Error = Bail;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Bail> {
        match self.r.peek_ws() {
            Some(b']') => return Ok(None),
            Some(b',') if !self.first => {
                self.r.pos += 1;
                // `[1,]` is refused by serde_json.
                if matches!(self.r.peek_ws(), Some(b']') | None) {
                    return Err(Bail);
                }
            }
            Some(_) if self.first => {}
            _ => return Err(Bail),
        }
        self.first = false;
        seed.deserialize(&mut *self.r).map(Some)
    }
}

struct Map<'a, 'de> {
    r: &'a mut Reader<'de>,
    first: bool,
}

impl<'de, 'a> MapAccess<'de> for Map<'a, 'de> {
    type Error = Bail;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Bail> {
        match self.r.peek_ws() {
            Some(b'}') => return Ok(None),
            Some(b',') if !self.first => {
                self.r.pos += 1;
                self.r.peek_ws();
            }
            Some(_) if self.first => {}
            _ => return Err(Bail),
        }
        self.first = false;
        // A member name is a string (`{"a":1,}` is refused by serde_json too).
        if self.r.bytes().get(self.r.pos) != Some(&b'"') {
            return Err(Bail);
        }
        self.r.pos += 1;
        seed.deserialize(Name { r: &mut *self.r }).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Bail> {
        if self.r.peek_ws() != Some(b':') {
            return Err(Bail);
        }
        self.r.pos += 1;
        seed.deserialize(&mut *self.r)
    }
}

/// A member name, after its opening quote: read as a string whatever the seed asks.
struct Name<'a, 'de> {
    r: &'a mut Reader<'de>,
}

impl<'de, 'a> Name<'a, 'de> {
    fn read<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        match self.r.string()? {
            Some(s) => visitor.visit_borrowed_str(s),
            None => visitor.visit_str(std::str::from_utf8(&self.r.scratch).map_err(|_| Bail)?),
        }
    }
}

impl<'de, 'a> Deserializer<'de> for Name<'a, 'de> {
    type Error = Bail;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        self.read(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        self.read(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        self.read(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        self.read(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bail> {
        self.r.skip_string()?;
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, _: usize, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    bail! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_u8
        deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit deserialize_seq
        deserialize_map
    }
}

/// Reads `text` as one JSON value through the fast path (any value, whitespace around it), as
/// `serde_json::from_str::<T>` would: for the tests' comparison with serde_json.
#[cfg(test)]
pub fn read_value<'de, T: serde::Deserialize<'de>>(text: &'de str) -> Result<T, Bail> {
    let mut r = Reader { src: text, pos: 0, depth: 0, scratch: Vec::new() };
    let value = T::deserialize(&mut r)?;
    match r.peek_ws() {
        None => Ok(value),
        Some(_) => Err(Bail),
    }
}

#[cfg(test)]
mod tests {
    use super::Reader;

    fn scan_from(text: &str, at: usize) -> usize {
        Reader { src: text, pos: 0, depth: 0, scratch: Vec::new() }.scan(at)
    }

    fn reference(text: &str, at: usize) -> usize {
        let b = text.as_bytes();
        (at..b.len()).find(|&i| b[i] == b'"' || b[i] == b'\\' || b[i] < 0x20).unwrap_or(b.len())
    }

    #[test]
    fn a_scan_stops_at_the_first_quote_backslash_or_control_byte_wherever_it_is() {
        let specials: Vec<char> = vec!['"', '\\', '\u{0}', '\u{1}', '\n', '\u{1f}'];
        let fillers = ["a", " ", "\u{7f}", "é", "€", "😀", "~!#"];
        for filler in fillers {
            for len in 0..24 {
                let plain = filler.repeat(len);
                for at in 0..=plain.len() {
                    if plain.is_char_boundary(at) {
                        assert_eq!(scan_from(&plain, at), reference(&plain, at), "{:?} from {}", plain, at);
                    }
                }
                for (p, _) in plain.char_indices().chain(std::iter::once((plain.len(), ' '))) {
                    for special in &specials {
                        for second in [None, Some('"'), Some('\u{2}')] {
                            let mut text = plain.clone();
                            text.insert(p, *special);
                            if let Some(c) = second {
                                text.push(c);
                            }
                            for at in 0..=text.len() {
                                if text.is_char_boundary(at) {
                                    assert_eq!(scan_from(&text, at), reference(&text, at), "{:?} from {}", text, at);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
