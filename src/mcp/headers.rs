//! The MCP request headers that mirror the body (2026-07-28
//! §Standard Request Headers), and the `=?base64?…?=` value encoding.
//!
//! This module never names an HTTP type: the caller hands a lookup closure
//! (header names matched case-insensitively, values as raw bytes).

use base64::Engine as _;

use crate::text::trim_ows;

/// `MCP-Protocol-Version`: the revision (both eras; legacy from 2025-06-18).
pub const HEADER_MCP_PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
/// `Mcp-Method`: mirrors the body's `method` (2026-07-28).
pub const HEADER_MCP_METHOD: &str = "Mcp-Method";
/// `Mcp-Name`: mirrors `params.name` / `params.uri` (2026-07-28).
pub const HEADER_MCP_NAME: &str = "Mcp-Name";
/// `Mcp-Session-Id`: accepted and ignored; this server never issues one.
pub const HEADER_MCP_SESSION_ID: &str = "Mcp-Session-Id";

/// Opens an encoded value. Case-sensitive: `=?BASE64?` is a literal.
pub const SENTINEL_PREFIX: &str = "=?base64?";
/// Closes an encoded value.
pub const SENTINEL_SUFFIX: &str = "?=";

/// Why a header value could not be turned into a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderValueError {
    /// The value has the sentinel form but its payload is not canonical
    /// padded standard base64 (RFC 4648 §4).
    InvalidBase64,
    /// The literal value, or the decoded payload, is not UTF-8.
    InvalidUtf8,
}

impl std::fmt::Display for HeaderValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeaderValueError::InvalidBase64 => "invalid base64 payload in =?base64?…?= value",
            HeaderValueError::InvalidUtf8 => "value is not valid UTF-8",
        })
    }
}

impl std::error::Error for HeaderValueError {}

/// True when `s` has the encoded form: the prefix, at least nothing, the
/// suffix, with prefix and suffix not overlapping (`=?base64?=` is literal).
fn is_sentinel(s: &[u8]) -> bool {
    s.len() >= SENTINEL_PREFIX.len() + SENTINEL_SUFFIX.len()
        && s.starts_with(SENTINEL_PREFIX.as_bytes())
        && s.ends_with(SENTINEL_SUFFIX.as_bytes())
}

/// Decodes an `Mcp-Name` (or `Mcp-Param-*`) header value to the string it
/// stands for.
///
/// Optional whitespace is trimmed first. A value of the form
/// `=?base64?<payload>?=` (lower-case markers) is decoded as canonical,
/// padded standard base64 of UTF-8; any other value is taken literally.
/// A value with the prefix but no suffix is literal.
///
/// # Errors
///
/// [`HeaderValueError::InvalidBase64`] for a bad payload (wrong padding,
/// characters outside the alphabet); [`HeaderValueError::InvalidUtf8`] when
/// the literal value or the decoded bytes are not UTF-8.
pub fn decode_header_value(raw: &[u8]) -> Result<String, HeaderValueError> {
    let v = trim_ows(raw);
    if is_sentinel(v) {
        let payload = &v[SENTINEL_PREFIX.len()..v.len() - SENTINEL_SUFFIX.len()];
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload)
            .map_err(|_| HeaderValueError::InvalidBase64)?;
        String::from_utf8(bytes).map_err(|_| HeaderValueError::InvalidUtf8)
    } else {
        std::str::from_utf8(v)
            .map(str::to_owned)
            .map_err(|_| HeaderValueError::InvalidUtf8)
    }
}

/// Encodes a body value for an `Mcp-Name` (or `Mcp-Param-*`) header.
///
/// Plain printable ASCII without leading or trailing whitespace travels as
/// is; anything else (non-ASCII, control characters, edge whitespace, or a
/// value that itself looks like the sentinel) becomes
/// `=?base64?<base64(utf-8)>?=`. `decode_header_value(encode_header_value(s))`
/// returns `s` for every string.
pub fn encode_header_value(value: &str) -> String {
    let b = value.as_bytes();
    let plain = b.iter().all(|c| (0x20..=0x7e).contains(c))
        && b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
        && !is_sentinel(b);
    if plain {
        value.to_owned()
    } else {
        let mut out = String::with_capacity(SENTINEL_PREFIX.len() + b.len() * 4 / 3 + 6);
        out.push_str(SENTINEL_PREFIX);
        base64::engine::general_purpose::STANDARD.encode_string(b, &mut out);
        out.push_str(SENTINEL_SUFFIX);
        out
    }
}

/// The request's headers, seen through the caller's lookup closure.
pub(crate) struct Headers<'a, 'h> {
    lookup: &'a dyn Fn(&str) -> Option<&'h [u8]>,
}

impl<'a, 'h> Headers<'a, 'h> {
    pub(crate) fn new(lookup: &'a dyn Fn(&str) -> Option<&'h [u8]>) -> Self {
        Headers { lookup }
    }

    /// The OWS-trimmed value of a header, if present.
    pub(crate) fn get(&self, name: &str) -> Option<&'h [u8]> {
        (self.lookup)(name).map(trim_ows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    mod decode {
        use super::*;

        fn ok(raw: &str, want: &str) {
            assert_eq!(
                decode_header_value(raw.as_bytes()).as_deref(),
                Ok(want),
                "{raw}"
            );
        }

        #[test]
        fn protocol_md_m10_vectors() {
            ok("=?base64?bcOpdMOpbw==?=", "météo");
            ok(
                "=?base64?ZmlsZTovLy9kb25uw6llcy/DqS50eHQ=?=",
                "file:///données/é.txt",
            );
            ok("=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界");
            ok("=?base64?IHBhZGRlZCA=?=", " padded ");
            ok("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?=");
        }

        #[test]
        fn bad_padding_is_an_error() {
            assert_eq!(
                decode_header_value(b"=?base64?SGVsbG8?="),
                Err(HeaderValueError::InvalidBase64)
            );
            assert_eq!(
                decode_header_value(b"=?base64?SGVsbG8==?="),
                Err(HeaderValueError::InvalidBase64)
            );
        }

        #[test]
        fn invalid_characters_are_an_error() {
            assert_eq!(
                decode_header_value(b"=?base64?SGVs!!!bG8=?="),
                Err(HeaderValueError::InvalidBase64)
            );
            assert_eq!(
                decode_header_value(b"=?base64?not*base64?="),
                Err(HeaderValueError::InvalidBase64)
            );
            // URL-safe alphabet is not the standard one.
            assert_eq!(
                decode_header_value(b"=?base64?_-8=?="),
                Err(HeaderValueError::InvalidBase64)
            );
        }

        #[test]
        fn upper_case_marker_is_literal() {
            ok(
                "=?BASE64?eF9tZF9nZXRfcHJvZmlsZQ==?=",
                "=?BASE64?eF9tZF9nZXRfcHJvZmlsZQ==?=",
            );
            ok("=?Base64?SGVsbG8=?=", "=?Base64?SGVsbG8=?=");
        }

        #[test]
        fn prefix_without_suffix_is_literal() {
            ok("=?base64?SGVsbG8=", "=?base64?SGVsbG8=");
            ok("=?base64?=", "=?base64?=");
            ok("SGVsbG8=?=", "SGVsbG8=?=");
        }

        #[test]
        fn empty_payload_is_empty_string() {
            ok("=?base64??=", "");
        }

        #[test]
        fn ows_is_trimmed_but_inner_space_kept() {
            ok("  get_weather  ", "get_weather");
            ok("\tx_md_get_post\t ", "x_md_get_post");
            ok(" =?base64?eF9tZF9nZXRfcHJvZmlsZQ==?= ", "x_md_get_profile");
            ok("a b", "a b");
            ok("", "");
            ok("   ", "");
        }

        #[test]
        fn non_utf8_is_an_error() {
            assert_eq!(
                decode_header_value(b"caf\xe9"),
                Err(HeaderValueError::InvalidUtf8)
            );
            // base64 of the single byte 0xff
            assert_eq!(
                decode_header_value(b"=?base64?/w==?="),
                Err(HeaderValueError::InvalidUtf8)
            );
        }
    }

    mod encode {
        use super::*;

        #[test]
        fn plain_ascii_is_unchanged() {
            assert_eq!(encode_header_value("x_md_get_post"), "x_md_get_post");
            assert_eq!(
                encode_header_value("https://example.com/resource?id=123"),
                "https://example.com/resource?id=123"
            );
            assert_eq!(encode_header_value("a b"), "a b");
            assert_eq!(encode_header_value(""), "");
            assert_eq!(encode_header_value("=?base64?="), "=?base64?=");
        }

        #[test]
        fn protocol_md_m10_vectors() {
            assert_eq!(encode_header_value("météo"), "=?base64?bcOpdMOpbw==?=");
            assert_eq!(
                encode_header_value("Hello, 世界"),
                "=?base64?SGVsbG8sIOS4lueVjA==?="
            );
            assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
            assert_eq!(
                encode_header_value("=?base64?literal?="),
                "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
            );
            assert_eq!(
                encode_header_value("file:///données/é.txt"),
                "=?base64?ZmlsZTovLy9kb25uw6llcy/DqS50eHQ=?="
            );
        }

        #[test]
        fn control_and_edge_whitespace_are_encoded() {
            assert!(encode_header_value("a\tb").starts_with(SENTINEL_PREFIX));
            assert!(encode_header_value("a\r\nb").starts_with(SENTINEL_PREFIX));
            assert!(encode_header_value("x ").starts_with(SENTINEL_PREFIX));
            assert!(encode_header_value(" x").starts_with(SENTINEL_PREFIX));
            assert!(encode_header_value("\u{7f}").starts_with(SENTINEL_PREFIX));
        }

        #[test]
        fn round_trips_every_string() {
            let fixed = [
                "",
                " ",
                "\t",
                "x",
                "=?base64?",
                "?=",
                "=?base64??=",
                "=?base64?=",
                "=?BASE64?x?=",
                " =?base64?x?= ",
                "é",
                "🦀",
                "\0",
                "a\u{85}b",
                "\u{feff}x",
                "tab\tin",
                "  lead",
                "trail  ",
                "\r\n",
            ];
            for s in fixed {
                assert_eq!(
                    decode_header_value(encode_header_value(s).as_bytes()).as_deref(),
                    Ok(s),
                    "{s:?}"
                );
            }
            // Pseudo-random strings over an alphabet full of edge cases.
            let alphabet: Vec<char> = " \t\r\n=?base64Z/+é世🦀\u{0}\u{7f}ABC-_.:"
                .chars()
                .collect();
            let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
            for _ in 0..20_000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let len = (state % 14) as usize;
                let mut s = String::new();
                let mut r = state;
                for _ in 0..len {
                    r = r
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    s.push(alphabet[(r >> 33) as usize % alphabet.len()]);
                }
                if state % 5 == 0 {
                    s = format!("=?base64?{s}?=");
                }
                let enc = encode_header_value(&s);
                assert!(enc.bytes().all(|c| (0x20..=0x7e).contains(&c)), "{enc:?}");
                assert_eq!(
                    decode_header_value(enc.as_bytes()).as_deref(),
                    Ok(s.as_str()),
                    "{s:?}"
                );
            }
        }
    }
}
