//! The fast path's serde `Deserializer`: the same visitor calls serde_json makes, `Bail` for any
//! way of reading a value the drivers' types do not use.

use super::{Bail, Reader};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Refuses every way of reading a value but the ones the driver's types use.
macro_rules! bail {
    ($($name:ident)*) => {
        $(fn $name<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Bail> {
            Err(Bail)
        })*
    };
}

/// The shaped requests (structs, tuples, enums) the fast path never serves: the driver's types ask
/// for none, so any of them gives up (a newtype struct is served only as `JsonText`).
macro_rules! bail_shaped {
    () => {
        fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Bail> {
            Err(Bail)
        }

        fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Bail> {
            Err(Bail)
        }

        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: usize,
            _: V,
        ) -> Result<V::Value, Bail> {
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

    /// A `JsonText` member: its text when it is what serde_json would write for it, else read as
    /// serde_json's `Deserializer` serves any newtype (the visitor then reads a `Value`).
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, Bail> {
        if name != crate::json_text::TOKEN {
            return Err(Bail);
        }
        match self.canonical_text() {
            Some(text) => visitor.visit_borrowed_str(text),
            None => visitor.visit_newtype_struct(self),
        }
    }

    bail_shaped!();

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

pub(super) struct Map<'a, 'de> {
    pub(super) r: &'a mut Reader<'de>,
    pub(super) first: bool,
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

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Bail> {
        Err(Bail)
    }

    bail_shaped!();

    bail! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_u8
        deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit deserialize_seq
        deserialize_map
    }
}
