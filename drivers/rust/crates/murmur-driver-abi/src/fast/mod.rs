//! A fast path for reading a line: a JSON reader for the common shape of harness lines that scans
//! strings eight bytes at a time, in front of `serde_json`.
//!
//! Why: after the lines were read in place, most of the guest's time per line was serde_json
//! 1.0.87's string scan (`parse_str`, `ignore_str`), a loop of one table lookup per byte (on
//! wasm32 a load, a table load, a compare and a bounds check each): a line is mostly strings, and
//! most of its bytes are in members the driver skips. Here a string is scanned as 64-bit words
//! (a word without a quote, backslash or control byte is skipped in one step).
//!
//! It is only a fast path: it implements serde's `Deserializer` for what the drivers' types ask
//! (`deserialize_any`, `deserialize_ignored_any`, and member names: enough for members read in
//! place, `lenient`'s `Field`, `Obj` of a derived struct, `Arr`, `Member` and `Json`, and
//! `JsonText`'s check of a value's text, `canonical`), making the
//! same visitor calls `serde_json` makes, and it gives up ([`Bail`]) on anything it does not read exactly as
//! `serde_json` does: a float or an integer of more than 18 digits that the driver reads, `-0`, a
//! `\u` escape of a surrogate in a string the driver reads, nesting deeper than [`MAX_DEPTH`], and
//! every syntax error. The caller then reads the line again with `serde_json` from scratch
//! ([`object_line_into`] does both), so every line reads as before; the fast path only has to never
//! accept what `serde_json` refuses and to read what it accepts into the same values.

use crate::lenient::{Field, ReadInPlace};
use serde::de::{self, Visitor};
use std::fmt;

mod de_impl;
use de_impl::Map;
mod string;
mod canonical;
mod nested;
pub use nested::NestedInPlace;
#[cfg(test)]
mod tests;

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

/// Reads the JSON object `line` into `target` as [`crate::lenient::object_line_into`] does, by the
/// fast path first and by `serde_json` from a fresh `T` when it gives up; `false` when serde_json
/// refuses the line too. `scratch` is the fast path's buffer (see [`read_line`]).
pub fn object_line_into<'de, T: ReadInPlace<'de> + Default>(line: &'de str, target: &mut T, scratch: &mut Vec<u8>) -> bool {
    if read_line(line, target, scratch).is_ok() {
        return true;
    }
    *target = T::default();
    crate::lenient::object_line_into(line, target)
}

/// Reads `text` as one JSON value through the fast path (any value, whitespace around it), as
/// `serde_json::from_str::<T>` would: for the drivers' tests' comparison with serde_json.
pub fn read_value<'de, T: serde::Deserialize<'de>>(text: &'de str) -> Result<T, Bail> {
    let mut r = Reader { src: text, pos: 0, depth: 0, scratch: Vec::new() };
    let value = T::deserialize(&mut r)?;
    match r.peek_ws() {
        None => Ok(value),
        Some(_) => Err(Bail),
    }
}

/// The fast path's reader: `de_impl` makes it a serde `Deserializer`, `string` reads its strings.
pub struct Reader<'de> {
    src: &'de str,
    pos: usize,
    /// Objects and arrays open at `pos`.
    depth: u32,
    /// The unescaped text of the last string that held escapes.
    scratch: Vec<u8>,
}

impl<'de> Reader<'de> {
    /// The line's object, member by member: a member `T` reads as a plain [`Field`]
    /// ([`ReadInPlace::field`]) is read straight into it, any other member `T` names through
    /// [`ReadInPlace::read_member`], the rest skipped. The same bytes are accepted and the same
    /// values read as through serde's `MapAccess` ([`crate::lenient::read_members`] over [`Map`]): the visitor
    /// calls, `Result`s and moves of that way cost as much as the reading on a short line.
    fn object_line<T: ReadInPlace<'de>>(&mut self, target: &mut T) -> Result<(), Bail> {
        if self.peek_ws() != Some(b'{') {
            return Err(Bail);
        }
        self.pos += 1;
        self.members_into(target)?;
        self.end(b'}')?;
        match self.peek_ws() {
            None => Ok(()),
            Some(_) => Err(Bail),
        }
    }

    /// An object's members after its `{`, up to its `}` (not consumed), read into `target` as
    /// [`Reader::object_line`] describes.
    fn members_into<T: ReadInPlace<'de>>(&mut self, target: &mut T) -> Result<(), Bail> {
        let mut seen: u64 = 0;
        if self.peek_ws() != Some(b'}') {
            loop {
                if self.peek_ws() != Some(b'"') {
                    return Err(Bail);
                }
                self.pos += 1;
                let index = match self.string()? {
                    Some(name) => T::member_index(name),
                    None => T::member_index(std::str::from_utf8(&self.scratch).map_err(|_| Bail)?),
                };
                match index {
                    Some(index) => {
                        let bit = 1u64 << index;
                        // A member named twice: serde_json refuses the line as well.
                        if seen & bit != 0 {
                            return Err(Bail);
                        }
                        seen |= bit;
                        match target.field(index) {
                            Some(field) => {
                                self.colon()?;
                                *field = self.field()?;
                            }
                            None => {
                                let at = self.pos;
                                self.colon()?;
                                match target.nested(index) {
                                    Some(nested) if self.peek_ws() == Some(b'{') => nested.read_object(self)?,
                                    // Not an object: read through `read_member`, colon and all.
                                    _ => {
                                        self.pos = at;
                                        target.read_member(index, &mut Map { r: self, first: false })?
                                    }
                                }
                            }
                        }
                    }
                    None => {
                        self.colon()?;
                        self.skip_value()?;
                    }
                }
                match self.peek_ws() {
                    Some(b',') => self.pos += 1,
                    _ => break,
                }
            }
        }
        Ok(())
    }

    /// The `:` after a member's name.
    #[inline]
    fn colon(&mut self) -> Result<(), Bail> {
        if self.peek_ws() != Some(b':') {
            return Err(Bail);
        }
        self.pos += 1;
        Ok(())
    }

    /// A value read as a [`Field`], as `Field::deserialize` through this reader reads it (its
    /// visitor's calls made directly): a string borrowed or unescaped, an integer, `true`,
    /// `false`, `null`, or an object or array skipped (`Other`).
    #[inline(always)]
    fn field(&mut self) -> Result<Field<'de>, Bail> {
        Ok(match self.peek_ws().ok_or(Bail)? {
            b'"' => {
                self.pos += 1;
                match self.string()? {
                    Some(s) => Field::Str(s),
                    None => Field::Owned(std::str::from_utf8(&self.scratch).map_err(|_| Bail)?.into()),
                }
            }
            b'-' | b'0'..=b'9' => match self.integer()? {
                (false, n) => Field::U64(n),
                (true, n) => Field::I64(-(n as i64)),
            },
            b'n' => {
                self.literal(b"null")?;
                Field::Null
            }
            b't' => {
                self.literal(b"true")?;
                Field::Bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                Field::Bool(false)
            }
            b'[' | b'{' => {
                self.skip_value()?;
                Field::Other
            }
            _ => return Err(Bail),
        })
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

    #[inline]
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
    #[inline]
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
        match self.integer()? {
            (false, n) => visitor.visit_u64(n),
            (true, n) => visitor.visit_i64(-(n as i64)),
        }
    }

    /// The integer at `pos`, consumed, as (negative, magnitude): one of at most 18 digits without
    /// a fraction or exponent, and not `-0` (serde_json reads that as a float); anything else
    /// gives up.
    #[inline(always)]
    fn integer(&mut self) -> Result<(bool, u64), Bail> {
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
        if negative && value == 0 {
            return Err(Bail);
        }
        Ok((negative, value))
    }
}
