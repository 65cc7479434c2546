//! The compact writer behind [`super::write`]: a serde `Serializer` that
//! appends JSON to a `Vec<u8>`, byte for byte what serde_json's own
//! compact serializer with [`super::SafeFormatter`] writes (the proptests
//! in `super::tests` hold it to that for any `Value`, any `RawValue` and
//! the model's types), but with strings written by [`super::write_str`]:
//! serde_json escapes a string one byte at a time and hands every run to
//! the formatter, which was a tenth of a profile cache miss (issue #15).
//!
//! Numbers other than integers are written by serde_json itself.

use serde::ser::{self, Error as _, Serialize};
use serde_json::Error;

use super::{write_raw, write_str};
use crate::text::push_u64;

/// The struct name serde_json gives a `RawValue` when serializing it (its
/// one field, of the same name, is the JSON text as sent).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Appends compact JSON to `out`.
pub(super) struct Writer<'a> {
    pub(super) out: &'a mut Vec<u8>,
}

fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// A float as serde_json writes it (`null` when not finite).
fn push_float<T: Serialize>(out: &mut Vec<u8>, v: T) -> Result<(), Error> {
    serde_json::to_writer(&mut *out, &v)
}

macro_rules! integers {
    ($($method:ident: $t:ty => $push:ident as $wide:ty),* $(,)?) => {
        $(fn $method(self, v: $t) -> Result<(), Error> {
            $push(self.out, <$wide>::from(v));
            Ok(())
        })*
    };
}

impl<'a, 'b> ser::Serializer for &'b mut Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'b>;
    type SerializeTuple = Compound<'a, 'b>;
    type SerializeTupleStruct = Compound<'a, 'b>;
    type SerializeTupleVariant = Compound<'a, 'b>;
    type SerializeMap = Compound<'a, 'b>;
    type SerializeStruct = Compound<'a, 'b>;
    type SerializeStructVariant = Compound<'a, 'b>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    integers! {
        serialize_i8: i8 => push_i64 as i64,
        serialize_i16: i16 => push_i64 as i64,
        serialize_i32: i32 => push_i64 as i64,
        serialize_i64: i64 => push_i64 as i64,
        serialize_u8: u8 => push_u64 as u64,
        serialize_u16: u16 => push_u64 as u64,
        serialize_u32: u32 => push_u64 as u64,
        serialize_u64: u64 => push_u64 as u64,
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.out.extend_from_slice(v.to_string().as_bytes());
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.out.extend_from_slice(v.to_string().as_bytes());
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        push_float(self.out, v)
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        push_float(self.out, v)
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        seq.end()
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'[');
        Ok(Compound::new(self, b"]"))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'b>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Compound::new(self, b"]}"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'{');
        Ok(Compound::new(self, b"}"))
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'a, 'b>, Error> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound {
                raw: true,
                ..Compound::new(self, b"")
            });
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":{");
        Ok(Compound::new(self, b"}}"))
    }
}

/// An array or object being written: a separator before every element
/// but the first, `close` at the end.
pub(super) struct Compound<'a, 'b> {
    writer: &'b mut Writer<'a>,
    first: bool,
    close: &'static [u8],
    /// A `RawValue`: its one field is JSON text, written as
    /// [`write_raw`] writes it.
    raw: bool,
}

impl<'a, 'b> Compound<'a, 'b> {
    fn new(writer: &'b mut Writer<'a>, close: &'static [u8]) -> Compound<'a, 'b> {
        Compound {
            writer,
            first: true,
            close,
            raw: false,
        }
    }

    fn separate(&mut self) {
        if !self.first {
            self.writer.out.push(b',');
        }
        self.first = false;
    }

    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.separate();
        value.serialize(&mut *self.writer)
    }

    fn member<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        if self.raw {
            let serde_json::Value::String(text) = serde_json::to_value(value)? else {
                return Err(Error::custom("a RawValue holds its JSON text"));
            };
            write_raw(self.writer.out, &text);
            return Ok(());
        }
        self.separate();
        write_str(self.writer.out, key);
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    fn close(self) -> Result<(), Error> {
        self.writer.out.extend_from_slice(self.close);
        Ok(())
    }
}

macro_rules! sequences {
    ($($trait:ident :: $method:ident),* $(,)?) => {
        $(impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        })*
    };
}

sequences! {
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
}

macro_rules! structs {
    ($($trait:ident),* $(,)?) => {
        $(impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: ?Sized + Serialize>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.member(key, value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        })*
    };
}

structs!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        self.separate();
        key.serialize(Key(&mut *self.writer))?;
        self.writer.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// An object key, as serde_json takes one: a string, or a bool, an
/// integer, a finite float or a char written as a string.
struct Key<'a, 'b>(&'b mut Writer<'a>);

fn key_must_be_a_string() -> Error {
    Error::custom("key must be a string")
}

impl Key<'_, '_> {
    /// `value` written as it would be as a value, in quotes.
    fn quoted(self, value: impl Serialize) -> Result<(), Error> {
        self.0.out.push(b'"');
        value.serialize(&mut *self.0)?;
        self.0.out.push(b'"');
        Ok(())
    }
}

macro_rules! quoted_keys {
    ($($method:ident: $t:ty),* $(,)?) => {
        $(fn $method(self, v: $t) -> Result<(), Error> {
            self.quoted(v)
        })*
    };
}

macro_rules! refused_keys {
    ($($method:ident($($arg:ty),*) -> $ret:ty),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ret, Error> {
            Err(key_must_be_a_string())
        })*
    };
}

impl ser::Serializer for Key<'_, '_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    quoted_keys! {
        serialize_bool: bool,
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_u128: u128,
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(Error::custom("float key must be finite"));
        }
        self.quoted(v)
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(Error::custom("float key must be finite"));
        }
        self.quoted(v)
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        ser::Serializer::serialize_char(self.0, v)
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.0.out, v);
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }

    refused_keys! {
        serialize_bytes(&[u8]) -> (),
        serialize_none() -> (),
        serialize_unit() -> (),
        serialize_unit_struct(&'static str) -> (),
        serialize_seq(Option<usize>) -> Self::SerializeSeq,
        serialize_tuple(usize) -> Self::SerializeTuple,
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct,
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant,
        serialize_map(Option<usize>) -> Self::SerializeMap,
        serialize_struct(&'static str, usize) -> Self::SerializeStruct,
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant,
    }
}
