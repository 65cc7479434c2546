//! Content negotiation for the MCP endpoint: `Accept` (RFC 9110 §12.5.1)
//! chooses JSON or single-frame SSE framing, and `Content-Type` (RFC 9110
//! §8.3) must name JSON.

use crate::text::trim_ows;

/// How a JSON-RPC reply is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Type: application/json`, the message as the body.
    Json,
    /// `Content-Type: text/event-stream`, one `event: message` frame.
    Sse,
}

/// One parsed media range with its weight in thousandths.
struct Range<'a> {
    kind: &'a [u8],
    subtype: &'a [u8],
    q: u16,
}

fn ranges(accept: &[u8]) -> impl Iterator<Item = Range<'_>> {
    accept.split(|b| *b == b',').filter_map(|item| {
        let mut parts = item.split(|b| *b == b';');
        let media = trim_ows(parts.next()?);
        let slash = media.iter().position(|b| *b == b'/')?;
        let (kind, subtype) = (trim_ows(&media[..slash]), trim_ows(&media[slash + 1..]));
        if kind.is_empty() || subtype.is_empty() {
            return None;
        }
        let mut q = 1000;
        for param in parts {
            let param = trim_ows(param);
            if param.len() >= 2 && param[..2].eq_ignore_ascii_case(b"q=") {
                q = parse_qvalue(&param[2..])?;
            }
        }
        Some(Range { kind, subtype, q })
    })
}

/// Parses a qvalue (`0`, `1`, `0.5`, `1.000`) into thousandths.
fn parse_qvalue(v: &[u8]) -> Option<u16> {
    let v = trim_ows(v);
    let (int, frac) = match v.iter().position(|b| *b == b'.') {
        Some(i) => (&v[..i], &v[i + 1..]),
        None => (v, &b""[..]),
    };
    if int.len() != 1 || frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = 0u16;
    for (i, d) in frac.iter().enumerate() {
        thousandths += u16::from(d - b'0') * [100, 10, 1][i];
    }
    match int[0] {
        b'0' => Some(thousandths),
        b'1' if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// The weight the `Accept` value gives `kind/subtype`, taking the most
/// specific matching range (RFC 9110 §12.5.1); `None` when nothing matches.
fn weight(accept: &[u8], kind: &[u8], subtype: &[u8]) -> Option<(u8, u16)> {
    let mut best: Option<(u8, u16)> = None;
    for r in ranges(accept) {
        let specificity =
            if r.kind.eq_ignore_ascii_case(kind) && r.subtype.eq_ignore_ascii_case(subtype) {
                3
            } else if r.kind.eq_ignore_ascii_case(kind) && r.subtype == b"*" {
                2
            } else if r.kind == b"*" && r.subtype == b"*" {
                1
            } else {
                continue;
            };
        if best.is_none_or(|(s, _)| specificity > s) {
            best = Some((specificity, r.q));
        }
    }
    best
}

/// The weight in thousandths (0–1000) the `Accept` values give
/// `kind/subtype` through their most specific matching range: 1000 when
/// `Accept` is absent (RFC 9110 §12.5.1: anything is acceptable), 0 when
/// no range matches.
pub fn quality(accept: Option<&[u8]>, kind: &[u8], subtype: &[u8]) -> u16 {
    match accept {
        None => 1000,
        Some(a) => weight(a, kind, subtype).map_or(0, |(_, q)| q),
    }
}

/// Chooses the framing for an MCP reply from the request's `Accept` values
/// (all `Accept` fields joined by commas; `None` when absent).
///
/// - A range naming `text/event-stream` exactly with q > 0 → SSE (this
///   covers the SDKs' `application/json, text/event-stream`).
/// - Otherwise JSON when `application/json` is acceptable (exactly or via
///   `application/*` or `*/*`, or when `Accept` is absent).
/// - Otherwise SSE when a wildcard (`text/*`, `*/*`) allows it.
/// - Otherwise `None`: the caller answers `406 Not Acceptable`.
pub fn choose_framing(accept: Option<&[u8]>) -> Option<Framing> {
    let Some(accept) = accept else {
        return Some(Framing::Json);
    };
    // The values real clients send, answered without parsing.
    match accept {
        b"application/json, text/event-stream" | b"text/event-stream" => return Some(Framing::Sse),
        b"application/json" | b"*/*" => return Some(Framing::Json),
        _ => {}
    }
    if trim_ows(accept).is_empty() {
        return Some(Framing::Json);
    }
    let sse = weight(accept, b"text", b"event-stream");
    if matches!(sse, Some((3, q)) if q > 0) {
        return Some(Framing::Sse);
    }
    if matches!(weight(accept, b"application", b"json"), Some((_, q)) if q > 0) {
        return Some(Framing::Json);
    }
    if matches!(sse, Some((_, q)) if q > 0) {
        return Some(Framing::Sse);
    }
    None
}

/// Whether the `Accept` values name `text/event-stream` explicitly with
/// q > 0 (used to tell an SSE stream request on `GET /mcp`).
pub fn names_event_stream(accept: Option<&[u8]>) -> bool {
    accept.is_some_and(|a| matches!(weight(a, b"text", b"event-stream"), Some((3, q)) if q > 0))
}

/// Whether a `Content-Type` value is `application/json`, parameters
/// allowed, case-insensitive (RFC 9110 §8.3.1).
pub fn is_json_content_type(value: Option<&[u8]>) -> bool {
    let Some(value) = value else { return false };
    let media = value.split(|b| *b == b';').next().unwrap_or(b"");
    trim_ows(media).eq_ignore_ascii_case(b"application/json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(accept: Option<&str>) -> Option<Framing> {
        choose_framing(accept.map(str::as_bytes))
    }

    #[test]
    fn accept_matrix() {
        use Framing::*;
        let cases: &[(Option<&str>, Option<Framing>)] = &[
            (None, Some(Json)),
            (Some(""), Some(Json)),
            (Some("*/*"), Some(Json)),
            (Some("application/json"), Some(Json)),
            (Some("text/event-stream"), Some(Sse)),
            (Some("application/json, text/event-stream"), Some(Sse)),
            (Some("text/event-stream, application/json"), Some(Sse)),
            (Some("application/*;q=0.9, text/*;q=0.5"), Some(Json)),
            (Some("text/html"), None),
            (Some("application/json;q=0, text/event-stream"), Some(Sse)),
            (Some("text/event-stream;q=0, application/json"), Some(Json)),
            (Some("text/event-stream;q=0"), None),
            (Some("application/json;q=0"), None),
            (Some("text/*"), Some(Sse)),
            (Some("*/*;q=0"), None),
            (Some("*/*, application/json;q=0"), Some(Sse)),
            (Some("APPLICATION/JSON"), Some(Json)),
            (Some("text/event-stream; q=0.001"), Some(Sse)),
            (Some("application/json; q=1.0"), Some(Json)),
            (Some("application/json;q=2"), None),
            (Some("garbage"), None),
        ];
        for (accept, want) in cases {
            assert_eq!(choose(*accept), *want, "Accept: {accept:?}");
        }
    }

    #[test]
    fn content_type_must_be_json() {
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON;Charset=\"UTF-8\"",
        ] {
            assert!(is_json_content_type(Some(ok.as_bytes())), "{ok}");
        }
        for bad in [
            "text/plain",
            "application/jsonx",
            "application/json-patch+json",
            "",
        ] {
            assert!(!is_json_content_type(Some(bad.as_bytes())), "{bad}");
        }
        assert!(!is_json_content_type(None));
    }

    #[test]
    fn quality_takes_the_most_specific_range() {
        let q = |a: Option<&str>, k: &str, s: &str| {
            quality(a.map(str::as_bytes), k.as_bytes(), s.as_bytes())
        };
        assert_eq!(q(None, "text", "markdown"), 1000);
        assert_eq!(q(Some("application/json"), "text", "markdown"), 0);
        assert_eq!(q(Some("application/json"), "application", "json"), 1000);
        assert_eq!(q(Some("*/*;q=0.2, text/*;q=0.5"), "text", "markdown"), 500);
        assert_eq!(
            q(
                Some("text/*;q=0.5, text/markdown;q=0.1"),
                "text",
                "markdown"
            ),
            100
        );
        assert_eq!(
            q(Some("*/*;q=0.2, text/*;q=0.5"), "application", "json"),
            200
        );
    }

    #[test]
    fn event_stream_request_detection() {
        assert!(names_event_stream(Some(b"text/event-stream")));
        assert!(!names_event_stream(Some(b"text/event-stream;q=0")));
        assert!(!names_event_stream(Some(b"*/*")));
        assert!(!names_event_stream(None));
    }
}
