//! The shape of a server's JSON, checked before it is parsed: nesting
//! depth, how many values and how many objects. Past the parse nothing in
//! the client recurses deeper than the value itself (typing,
//! re-serializing, dropping), and a parsed value costs far more than its
//! text (a 7-byte `{"":0}` is a map node of ~600 bytes: 14 MB of them took
//! 2.6 GiB), so these caps bound both the stack and the memory.

use super::error::Error;

/// Deepest nesting of arrays and objects read in one server message: 100
/// (below serde_json's own recursion limit of 128, so that one is never
/// the one to trip). A deeper message ends the call with a protocol
/// violation ("reply nests arrays and objects deeper than 100 levels").
pub const MAX_REPLY_DEPTH: usize = 100;

/// Most JSON values (array elements and object members, arrays and
/// objects included) in one server message, and in the pages of one
/// `list_*` call together: 1,000,000 (parsed, at most ~64 MiB). More ends
/// the call with a protocol violation ("… more than 1000000 JSON values").
pub const MAX_REPLY_VALUES: u64 = 1_000_000;

/// Most JSON objects in one server message, and in the pages of one
/// `list_*` call together: 50,000 (a parsed map node is ~600 bytes: about
/// 30 MiB; `xmd client` printing 50,000 objects peaked at ~75 MiB). More
/// ends the call with a protocol violation ("… more than 50000 JSON
/// objects").
pub const MAX_REPLY_OBJECTS: u64 = 50_000;

/// What the messages of one exchange (or the pages of one list) held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Body bytes read.
    pub bytes: u64,
    /// JSON values counted (see [`MAX_REPLY_VALUES`]).
    pub values: u64,
    /// JSON objects counted.
    pub objects: u64,
}

impl Tally {
    /// Adds `other`; `Err` naming `what` and ending in `tail` when the
    /// values or objects pass their caps.
    pub(crate) fn add(&mut self, other: Tally, what: &str, tail: &str) -> Result<(), Error> {
        self.bytes += other.bytes;
        self.values += other.values;
        self.objects += other.objects;
        if self.values > MAX_REPLY_VALUES {
            return Err(Error::protocol(format!(
                "{what} more than {MAX_REPLY_VALUES} JSON values; {tail}"
            )));
        }
        if self.objects > MAX_REPLY_OBJECTS {
            return Err(Error::protocol(format!(
                "{what} more than {MAX_REPLY_OBJECTS} JSON objects; {tail}"
            )));
        }
        Ok(())
    }
}

/// The values and objects in `json`, or `Err` when it nests arrays and
/// objects deeper than [`MAX_REPLY_DEPTH`] or passes a cap: one pass over
/// the bytes, brackets and commas inside strings not counted. Says nothing
/// about validity (the parser does).
pub(crate) fn check_shape(json: &[u8]) -> Result<Tally, Error> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut t = Tally::default();
    for (i, b) in json.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_REPLY_DEPTH {
                    return Err(Error::protocol(format!(
                        "reply nests arrays and objects deeper than {MAX_REPLY_DEPTH} levels (at byte {i})"
                    )));
                }
                // A container is a value, and its first element one more.
                t.values += 2;
                t.objects += u64::from(*b == b'{');
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => t.values += 1,
            _ => {}
        }
        if t.values > MAX_REPLY_VALUES || t.objects > MAX_REPLY_OBJECTS {
            Tally::default().add(t, "reply holds", "refused before parsing")?;
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_brackets_outside_strings() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(check_shape(deep(MAX_REPLY_DEPTH).as_bytes()).is_ok());
        assert_eq!(
            check_shape(deep(MAX_REPLY_DEPTH + 1).as_bytes()),
            Err(Error::protocol(
                "reply nests arrays and objects deeper than 100 levels (at byte 100)"
            ))
        );
        let in_string = format!("{{\"a\":\"{}\\\"{}\"}}", "[".repeat(500), "{".repeat(500));
        assert!(check_shape(in_string.as_bytes()).is_ok());
        // Siblings do not add up.
        let wide = format!("[{}]", vec![deep(99); 50].join(","));
        assert!(check_shape(wide.as_bytes()).is_ok());
        // serde_json reads what the check lets through.
        assert!(serde_json::from_str::<serde_json::Value>(&deep(MAX_REPLY_DEPTH)).is_ok());
    }

    #[test]
    fn values_and_objects_are_counted_against_their_caps() {
        let t = check_shape(br#"{"a":[1,2,{"b":"x,y{"}],"c":null}"#).unwrap();
        assert_eq!((t.objects, t.values), (2, 9));
        let zeros = format!("[{}]", vec!["0"; MAX_REPLY_VALUES as usize].join(","));
        assert_eq!(
            check_shape(zeros.as_bytes()),
            Err(Error::protocol(
                "reply holds more than 1000000 JSON values; refused before parsing"
            ))
        );
        let objects = format!("[{}]", vec!["{}"; MAX_REPLY_OBJECTS as usize + 1].join(","));
        assert_eq!(
            check_shape(objects.as_bytes()),
            Err(Error::protocol(
                "reply holds more than 50000 JSON objects; refused before parsing"
            ))
        );
        let objects = format!("[{}]", vec!["{}"; MAX_REPLY_OBJECTS as usize - 1].join(","));
        assert!(check_shape(objects.as_bytes()).is_ok());
    }
}
