//! The nesting depth of a server's JSON, checked before it is parsed. Past
//! the parse nothing in the client recurses deeper than the value itself
//! (typing, re-serializing, dropping), so this one cap bounds them all.

use super::error::Error;

/// Deepest nesting of arrays and objects read in one server message: 100
/// (below serde_json's own recursion limit of 128, so that one is never
/// the one to trip). A deeper message ends the call with a protocol
/// violation ("reply nests arrays and objects deeper than 100 levels").
pub const MAX_REPLY_DEPTH: usize = 100;

/// `Err` when `json` nests arrays and objects deeper than
/// [`MAX_REPLY_DEPTH`]: one pass over the bytes, brackets inside strings
/// not counted. Says nothing about validity (the parser does).
pub(crate) fn check_depth(json: &[u8]) -> Result<(), Error> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
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
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_brackets_outside_strings() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(check_depth(deep(MAX_REPLY_DEPTH).as_bytes()).is_ok());
        assert_eq!(
            check_depth(deep(MAX_REPLY_DEPTH + 1).as_bytes()),
            Err(Error::protocol(
                "reply nests arrays and objects deeper than 100 levels (at byte 100)"
            ))
        );
        let in_string = format!("{{\"a\":\"{}\\\"{}\"}}", "[".repeat(500), "{".repeat(500));
        assert!(check_depth(in_string.as_bytes()).is_ok());
        // Siblings do not add up.
        let wide = format!("[{}]", vec![deep(99); 50].join(","));
        assert!(check_depth(wide.as_bytes()).is_ok());
        // serde_json reads what the check lets through.
        assert!(serde_json::from_str::<serde_json::Value>(&deep(MAX_REPLY_DEPTH)).is_ok());
    }
}
