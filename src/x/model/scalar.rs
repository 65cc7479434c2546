//! The tolerant leaves of the model: ids, counts and loose strings.
//!
//! FxTwitter documents ids as decimal strings, but some paths have sent
//! JSON numbers (above 2^53 too); counts are sometimes floats or `null`.
//! Each leaf accepts what the upstream has been seen to send and keeps it
//! exact; the rest is a shape error (ids) or absent (counts).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::x::url::canonical_id;

/// A post or account id: a JSON string, or a non-negative JSON integer
/// read exactly (serde_json reads any integer up to `u64::MAX` as a
/// `u64`, never through `f64`). Always serialized as a string. A string
/// of digits is kept in the one spelling every id has in this server
/// ([`canonical_id`]: no leading zeros), so `"007"` and `7` are one post,
/// as they are for a caller's `id`; a string that is not digits is kept
/// as sent (rows with such an id are skipped, never linked).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Id(pub String);

impl Id {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an id (a decimal string or a non-negative integer)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id(spelled(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Id, E> {
                Ok(Id(spelled(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                u64::try_from(v)
                    .map(|v| Id(v.to_string()))
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// `v` in its one spelling: digits without leading zeros, anything else
/// as sent.
fn spelled(v: String) -> String {
    if v.len() > 1 && v.starts_with('0') && v.bytes().all(|b| b.is_ascii_digit()) {
        canonical_id(&v)
    } else {
        v
    }
}

/// The first float that is no `u64` (2^64): a count at or above it is
/// absent, not saturated to `u64::MAX`.
const FLOAT_PAST_U64: f64 = 18_446_744_073_709_551_616.0;

/// A count (`likes`, `followers`, …): a whole number, floats rounded;
/// negative numbers, numbers past `u64::MAX`, `null` and anything not a
/// number are absent (as
/// before the typed model: a count is never worth failing a post).
pub type Count = Option<u64>;

/// Deserializes a [`Count`] from any JSON value.
pub fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
    d.deserialize_any(Loose(|l| match l {
        Leaf::U(n) => Some(n),
        Leaf::F(f) if (0.0..FLOAT_PAST_U64).contains(&f) => Some(f.round() as u64),
        _ => None,
    }))
}

/// Deserializes a string that may be missing, `null` or not a string
/// (then the empty string): a status's `text`.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    d.deserialize_any(Loose(|l| match l {
        Leaf::S(s) => s,
        _ => String::new(),
    }))
}

/// Deserializes an optional string from any JSON value: a non-string is
/// absent (fields only shown, never relied on).
pub fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    d.deserialize_any(Loose(|l| match l {
        Leaf::S(s) => Some(s),
        _ => None,
    }))
}

/// A short upstream word (`type`, `provider`, `embed_card`, `lang`, a
/// facet's or a verification's `type`): one of [`WORDS`], which FxTwitter
/// sends on nearly every row, is a shared constant instead of an
/// allocation; any other word is kept as sent. Serialized as the string.
pub type Word = Cow<'static, str>;

/// The words read as constants: the values of the fields read as
/// [`Word`]s that upstream.md §1 documents.
pub const WORDS: &[&str] = &[
    "status",
    "tombstone",
    "profile",
    "user",
    "tweet",
    "twitter",
    "bluesky",
    "en",
    "url",
    "media",
    "mention",
    "hashtag",
    "cashtag",
    "individual",
    "business",
    "government",
    "photo",
    "video",
    "gif",
];

/// Deserializes an optional [`Word`] from any JSON value: a non-string
/// is absent, as for [`opt_text`].
pub fn opt_word<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Word>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<Word>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(match WORDS.iter().find(|w| **w == v) {
                Some(w) => Cow::Borrowed(*w),
                None => Cow::Owned(v.to_string()),
            }))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Some(match WORDS.iter().find(|w| **w == v) {
                Some(w) => Cow::Borrowed(*w),
                None => Cow::Owned(v),
            }))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            while a.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// Deserializes a flag from any JSON value: `true` only for `true`.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_any(Loose(|l| matches!(l, Leaf::B(true))))
}

/// Deserializes an optional boolean from any JSON value.
pub fn opt_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    d.deserialize_any(Loose(|l| match l {
        Leaf::B(b) => Some(b),
        _ => None,
    }))
}

/// Deserializes an optional number from any JSON value (kept as sent:
/// an integer stays an integer): a non-number is absent.
pub fn opt_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<serde_json::Number>, D::Error> {
    d.deserialize_any(Loose(|l| match l {
        Leaf::U(n) => Some(n.into()),
        Leaf::F(f) => serde_json::Number::from_f64(f),
        _ => None,
    }))
}

/// What a loose leaf held.
enum Leaf {
    U(u64),
    F(f64),
    S(String),
    B(bool),
    Other,
}

/// A visitor that accepts any JSON value and maps its leaf with `F`
/// (containers are skipped and seen as [`Leaf::Other`]).
struct Loose<F>(F);

impl<'de, T, F: FnOnce(Leaf) -> T> Visitor<'de> for Loose<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok((self.0)(Leaf::U(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok((self.0)(match u64::try_from(v) {
            Ok(u) => Leaf::U(u),
            Err(_) => Leaf::Other,
        }))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok((self.0)(Leaf::F(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.0)(Leaf::S(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<T, E> {
        Ok((self.0)(Leaf::S(v)))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
        Ok((self.0)(Leaf::B(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok((self.0)(Leaf::Other))
    }
    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok((self.0)(Leaf::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<T, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok((self.0)(Leaf::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<T, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok((self.0)(Leaf::Other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        id: Id,
        #[serde(default, deserialize_with = "count")]
        n: Count,
        #[serde(default, deserialize_with = "text")]
        t: String,
    }

    fn t(json: &str) -> T {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn ids_as_strings_or_exact_numbers() {
        assert_eq!(t(r#"{"id":"42"}"#).id.as_str(), "42");
        assert_eq!(
            t(r#"{"id":18446744073709551615}"#).id.as_str(),
            "18446744073709551615"
        );
        // 2^53 + 1: not representable in an f64.
        assert_eq!(
            t(r#"{"id":9007199254740993}"#).id.as_str(),
            "9007199254740993"
        );
        assert!(serde_json::from_str::<T>(r#"{"id":-1}"#).is_err());
        assert!(serde_json::from_str::<T>(r#"{"id":1.5}"#).is_err());
        assert!(serde_json::from_str::<T>(r#"{"id":{}}"#).is_err());
        assert_eq!(serde_json::to_string(&Id("7".into())).unwrap(), "\"7\"");
    }

    #[test]
    fn words_are_shared_constants_or_kept_as_sent() {
        #[derive(Deserialize, Serialize)]
        struct W {
            #[serde(default, deserialize_with = "opt_word")]
            w: Option<Word>,
        }
        let w = |json: &str| serde_json::from_str::<W>(json).unwrap().w;
        assert!(matches!(
            w(r#"{"w":"status"}"#),
            Some(Cow::Borrowed("status"))
        ));
        assert!(matches!(
            w(r#"{"w":"individual"}"#),
            Some(Cow::Borrowed("individual"))
        ));
        // An escaped spelling is the same word.
        assert!(matches!(
            w(r#"{"w":"st\u0061tus"}"#),
            Some(Cow::Borrowed("status"))
        ));
        assert!(matches!(w(r#"{"w":"Status"}"#), Some(Cow::Owned(o)) if o == "Status"));
        assert!(matches!(w(r#"{"w":"x\ny"}"#), Some(Cow::Owned(o)) if o == "x\ny"));
        for other in [
            "1",
            "-1",
            "1.5",
            "true",
            "null",
            "[\"status\"]",
            "{\"a\":\"status\"}",
        ] {
            assert_eq!(w(&format!(r#"{{"w":{other}}}"#)), None, "{other}");
        }
        assert_eq!(w("{}"), None);
        let back =
            |json: &str| serde_json::to_string(&serde_json::from_str::<W>(json).unwrap()).unwrap();
        assert_eq!(back(r#"{"w":"status"}"#), r#"{"w":"status"}"#);
        assert_eq!(back(r#"{"w":"Other"}"#), r#"{"w":"Other"}"#);
    }

    #[test]
    fn counts_and_texts_are_loose() {
        assert_eq!(t(r#"{"id":"1","n":3}"#).n, Some(3));
        assert_eq!(t(r#"{"id":"1","n":2.5}"#).n, Some(3));
        assert_eq!(t(r#"{"id":"1","n":-2}"#).n, None);
        assert_eq!(t(r#"{"id":"1","n":"12"}"#).n, None);
        assert_eq!(t(r#"{"id":"1","n":{"a":[1]}}"#).n, None);
        assert_eq!(t(r#"{"id":"1","n":null}"#).n, None);
        assert_eq!(t(r#"{"id":"1"}"#).n, None);
        assert_eq!(t(r#"{"id":"1","t":["x"]}"#).t, "");
        assert_eq!(t(r#"{"id":"1","t":"x"}"#).t, "x");
    }
}
