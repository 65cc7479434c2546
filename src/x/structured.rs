//! A result's `structuredContent` as a tool builds it: one JSON object
//! whose small members (`truncated`, `next_cursor`, `warnings`, …) are
//! `serde_json::Value`s the result budget may still edit, and whose bulky
//! members (the rows of a list, a profile) are written to JSON bytes once,
//! when the tool adds them, by the one JSON writer ([`crate::json::write`]).
//! The rows are never held as a `Value` tree: building, measuring,
//! serializing and freeing one was about a quarter of a profile cache
//! miss (issue #15 item 7).
//!
//! Written out ([`Structured::write`]), the members come in bytewise key
//! order, as `serde_json::Map` orders an object's members, whichever kind
//! they are.

use serde::Serialize;
use serde_json::{Map, Value};

/// Bytes first reserved for a bulky member: 4 KiB, a few rows (a
/// profile page of 3 posts writes about 4 KiB), so a member grows by
/// doubling a few times at most rather than from a few hundred bytes.
const WRITTEN_CAPACITY: usize = 4096;

/// A `structuredContent` object being built (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Structured {
    /// Small members.
    members: Map<String, Value>,
    /// Bulky members as written JSON, by key; no key is also in `members`.
    written: Vec<(&'static str, Vec<u8>)>,
}

impl Structured {
    /// An object of `members`.
    pub fn new(members: Map<String, Value>) -> Structured {
        Structured {
            members,
            written: Vec::new(),
        }
    }

    /// Sets the small member `key`.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        let key = key.into();
        self.written.retain(|(k, _)| *k != key);
        self.members.insert(key, value);
    }

    /// Sets the bulky member `key` to `value`, written now.
    pub fn insert_written<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) {
        self.insert_bytes(key, Structured::written(value));
    }

    /// `value` written as a bulky member is, for [`Structured::insert_bytes`]
    /// (a member added to many builds is written once).
    pub fn written<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(WRITTEN_CAPACITY);
        crate::json::write(&mut bytes, value);
        bytes
    }

    /// Sets the bulky member `key` to `json`, a value [`crate::json::write`]
    /// wrote (so the object stays what that writer writes).
    pub fn insert_bytes(&mut self, key: &'static str, json: Vec<u8>) {
        self.members.remove(key);
        match self.written.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = json,
            None => self.written.push((key, json)),
        }
    }

    /// The small member `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.get(key)
    }

    /// Appends the object as compact JSON to `out`, members in key order.
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut written: Vec<&(&'static str, Vec<u8>)> = self.written.iter().collect();
        written.sort_unstable_by_key(|(k, _)| *k);
        let mut written = written.into_iter().peekable();
        let mut small = self.members.iter().peekable();
        out.push(b'{');
        let mut first = true;
        loop {
            let take_small = match (small.peek(), written.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((a, _)), Some((b, _))) => a.as_str() < *b,
            };
            if !first {
                out.push(b',');
            }
            first = false;
            if take_small {
                let (k, v) = small.next().expect("peeked");
                crate::json::write_str(out, k);
                out.push(b':');
                crate::json::write(out, v);
            } else {
                let (k, v) = written.next().expect("peeked");
                crate::json::write_str(out, k);
                out.push(b':');
                out.extend_from_slice(v);
            }
        }
        out.push(b'}');
    }

    /// The object as compact JSON.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            self.written
                .iter()
                .map(|(_, v)| v.len() + 16)
                .sum::<usize>()
                + 256,
        );
        self.write(&mut out);
        out
    }

    /// An upper bound of `self.to_vec().len()`, found without writing: the
    /// small members by [`crate::json::max_len`], the written ones exactly.
    pub fn max_len(&self) -> usize {
        let key = |k: &str| 2 + crate::json::MAX_ESCAPED_BYTES_PER_BYTE * k.len();
        2 + self
            .members
            .iter()
            .map(|(k, v)| key(k) + 2 + crate::json::max_len(v))
            .sum::<usize>()
            + self
                .written
                .iter()
                .map(|(k, v)| key(k) + 2 + v.len())
                .sum::<usize>()
    }

    /// The object as one `Value` (its written members read back), for
    /// in-process callers and the budget's last resort.
    pub fn to_value(&self) -> Value {
        let mut m = self.members.clone();
        for (k, v) in &self.written {
            let v = serde_json::from_slice(v).unwrap_or(Value::Null);
            m.insert((*k).to_string(), v);
        }
        Value::Object(m)
    }
}

impl From<Map<String, Value>> for Structured {
    fn from(members: Map<String, Value>) -> Structured {
        Structured::new(members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn members_of_both_kinds_come_in_key_order() {
        let mut s = Structured::default();
        s.insert("b", json!(1));
        s.insert_written("posts", &[json!({"z": 1, "a": "\u{2028}"})]);
        s.insert("truncated", json!(false));
        s.insert_written("a", "x");
        assert_eq!(
            String::from_utf8(s.to_vec()).unwrap(),
            r#"{"a":"x","b":1,"posts":[{"a":"\u2028","z":1}],"truncated":false}"#
        );
    }

    #[test]
    fn a_key_set_again_keeps_one_member() {
        let mut s = Structured::default();
        s.insert_written("posts", &[1]);
        s.insert("posts", json!([]));
        assert_eq!(s.to_vec(), br#"{"posts":[]}"#);
        s.insert_written("posts", &[2]);
        s.insert_written("posts", &[3]);
        assert_eq!(s.to_vec(), br#"{"posts":[3]}"#);
        assert_eq!(Structured::default().to_vec(), b"{}");
    }

    proptest! {
        /// The oracle: the same members in one `serde_json::Map`, written
        /// by the one writer; and `max_len` bounds the length.
        #[test]
        fn writes_what_one_value_would(
            small in proptest::collection::btree_map("[a-z_]{1,6}", any::<String>(), 0..6),
            bulky in proptest::collection::btree_map(
                prop::sample::select(vec!["posts", "profile", "users", "a", "zz", "next_cursor"]),
                proptest::collection::vec(any::<String>(), 0..4),
                0..4,
            ),
        ) {
            let mut s = Structured::default();
            let mut oracle = Map::new();
            for (k, v) in &small {
                s.insert(k.clone(), json!(v));
                oracle.insert(k.clone(), json!(v));
            }
            for (k, v) in &bulky {
                s.insert_written(k, v);
                oracle.insert((*k).to_string(), json!(v));
            }
            let oracle = Value::Object(oracle);
            prop_assert_eq!(s.to_vec(), crate::json::to_vec(&oracle));
            prop_assert!(s.max_len() >= s.to_vec().len());
            prop_assert_eq!(s.to_value(), oracle);
        }
    }
}
