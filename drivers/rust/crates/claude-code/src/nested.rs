//! Nested objects read in place, as the line's top-level object is (`lenient::ReadInPlace`): a
//! line's `Line` holds each nested struct inline and `serde_json` fills it member by member, where
//! a derived visitor kept an `Option` of every member, built the struct, and moved it out through
//! `Result`, `Obj` and `Option` into its parent (on wasm32 each move a `memory.copy`). Reads as
//! `lenient::Obj<T>` of a derived `#[serde(default)]` struct does: a JSON object is read into `T`
//! (a member named twice fails the line, a member `T` does not name is skipped unread, an escaped
//! name is matched unescaped); any other JSON value is skipped and the member reads as absent.

use murmur_driver_abi::lenient::{read_members, ReadInPlace};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A member that is a JSON object read in place into `T`; absent when it was not an object (or
/// not in the line), as `Obj<T>` is `Obj(None)`.
#[derive(Default)]
pub struct Nested<T> {
    present: bool,
    value: T,
}

impl<T> Nested<T> {
    pub fn get(&self) -> Option<&T> {
        if self.present {
            Some(&self.value)
        } else {
            None
        }
    }

    pub fn get_mut(&mut self) -> Option<&mut T> {
        if self.present {
            Some(&mut self.value)
        } else {
            None
        }
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
        self.0.present = true;
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}
