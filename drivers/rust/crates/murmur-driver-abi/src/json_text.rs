//! A member a driver reports as JSON text (a tool call's input), read so that the common case
//! costs a copy of its text instead of a `serde_json::Value` built and written out again.
//!
//! Why (issue #15): building the input's `Value` (an ordered map, every key and string
//! allocated) and serialising it back was ~5 % of `jsonl`'s CPU per line at batch 16 although one
//! line in eighteen carries it. The text a harness prints is nearly always already what
//! `serde_json::to_string` of its `Value` gives, so the fast path (`fast`) checks exactly that
//! while it skips the value, and keeps the text when it holds:
//! - no whitespace outside strings;
//! - in strings, only the escapes serde_json writes itself and only where it writes them
//!   (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`; any `\u` or `\/` is left to the `Value`);
//! - integers only, of at most 18 digits, not `-0` (serde_json reads both exactly and writes the
//!   same digits back); a fraction or an exponent is left to the `Value`;
//! - no object naming a member twice (the `Value` keeps one of them), and at most
//!   [`MAX_CHECKED_MEMBERS`] members per object.
//!
//! Anything else is read as before, into a `Value` written out by `util::json_text`, as is every
//! value `serde_json` itself reads (a line the fast path gave up on).

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::Value;
use std::fmt;

/// Objects with more members than this are left to the `Value` (the duplicate check compares
/// each name with the earlier ones).
pub const MAX_CHECKED_MEMBERS: usize = 16;

/// The name the fast path recognises in `deserialize_newtype_struct`: it answers with the raw,
/// checked text (`visit_borrowed_str`) or, when the text is not as serde_json writes it, through
/// `visit_newtype_struct`, as serde_json always does.
pub(crate) const TOKEN: &str = "$murmur_driver_abi::json_text::JsonText";

/// A member reported as JSON text: absent, or present with any value (`null` included), kept as
/// text checked to be what serde_json writes for it, or as the `Value` read.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum JsonText<'a> {
    #[default]
    Absent,
    /// The member's text, exactly `serde_json::to_string` of its value.
    Raw(&'a str),
    /// Boxed: most lines do not carry the member, and a `Value` would make every line's struct
    /// larger.
    Value(Box<Value>),
}

impl<'a> JsonText<'a> {
    /// The value as JSON text (as `util::json_text` writes its `Value`), `None` when absent.
    pub fn text(&self) -> Option<String> {
        match self {
            JsonText::Absent => None,
            JsonText::Raw(s) => Some(crate::lenient::owned(s)),
            JsonText::Value(v) => Some(crate::util::json_text(v)),
        }
    }

    /// In the line with any value, `null` included.
    pub fn is_present(&self) -> bool {
        !matches!(self, JsonText::Absent)
    }
}

struct JsonTextVisitor;

impl<'de> Visitor<'de> for JsonTextVisitor {
    type Value = JsonText<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    /// Only the fast path answers this way, with text it checked.
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<JsonText<'de>, E> {
        Ok(JsonText::Raw(v))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<JsonText<'de>, D::Error> {
        Value::deserialize(d).map(|v| JsonText::Value(Box::new(v)))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(TOKEN, JsonTextVisitor)
    }
}

#[cfg(test)]
mod tests;
