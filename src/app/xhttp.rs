//! HTTP helpers of the plain X routes: query-string decoding, RFC 9457
//! problem details, strong entity tags and `If-None-Match`.

use serde_json::{json, Map, Value};

use crate::http::response::reason_phrase;
use crate::http::{Body, Response};
use crate::metrics::METRICS;
use crate::x::error::DEFAULT_RETRY_AFTER_SECS;
use crate::x::tools::CallStats;

/// Media type of an RFC 9457 problem details body.
pub const PROBLEM_MEDIA_TYPE: &str = "application/problem+json";

/// Most parameters one query string may carry. Default 32; more answer
/// `400` with code `invalid_query` (no route takes more than 9).
pub const MAX_QUERY_PARAMS: usize = 32;

/// Machine code of a query string that cannot be decoded or names a
/// parameter the route does not take (`400`).
pub const CODE_INVALID_QUERY: &str = "invalid_query";
/// Machine code of a parameter value the tool refuses (`400`), the same
/// code the tools use.
pub const CODE_INVALID_ARGUMENTS: &str = "invalid_arguments";

/// Records a finished tool call, from `/mcp` or an X route, the same way:
/// `xmd_tool_calls_total`, `xmd_cache_requests_total`, and the access
/// log fields of `response` (tool, time, cache status, failure).
pub fn record_call(stats: &CallStats, response: &mut Response) {
    METRICS.tool(stats.tool, stats.outcome as usize);
    if let Some(c) = stats.cache {
        METRICS.cache(c);
    }
    response.trace.tool = Some(stats.tool.name());
    response.trace.tool_ms = Some(stats.took.as_millis() as u64);
    response.trace.cache = stats.cache.map(crate::x::cache::CacheStatus::as_str);
    response.trace.error = stats.error_code.map(super::metered::failure_note);
    response.trace.fallback = stats.source.map(super::metered::fallback_note);
}

/// Decodes an `application/x-www-form-urlencoded` query: `+` is a space,
/// `%XX` a byte, the result must be UTF-8, empty pieces (`a=1&&b=2`) are
/// skipped and a name given twice is refused.
pub fn parse_query(query: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for piece in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = piece.split_once('=').unwrap_or((piece, ""));
        let name = decode(k).ok_or_else(|| {
            "the query string is not valid percent-encoded UTF-8 (application/x-www-form-urlencoded)"
                .to_string()
        })?;
        let value = decode(v).ok_or_else(|| {
            format!(
                "query parameter `{}` is not valid percent-encoded UTF-8",
                clip(&name)
            )
        })?;
        if out.iter().any(|(n, _)| *n == name) {
            return Err(format!(
                "query parameter `{}` is given more than once",
                clip(&name)
            ));
        }
        if out.len() == MAX_QUERY_PARAMS {
            return Err(format!(
                "the query string has more than {MAX_QUERY_PARAMS} parameters"
            ));
        }
        out.push((name, value));
    }
    Ok(out)
}

/// Most characters of a parameter name echoed in an error. Default 40;
/// a longer name is cut and ends with `…`.
pub const MAX_ECHOED_NAME_CHARS: usize = 40;

fn clip(name: &str) -> std::borrow::Cow<'_, str> {
    crate::text::clip(name, MAX_ECHOED_NAME_CHARS)
}

fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = b.get(i + 1..i + 3)?;
                let h = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(h, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// An RFC 9457 problem response: `type` `about:blank` (the status says
/// it all; the machine code is the `code` extension member), `title` the
/// reason phrase, `detail` the human sentence, and `retry_after` (seconds)
/// exactly when the tool's error names one. The `Retry-After` header
/// carries that hint, and is always sent on `429` and `503` (default
/// [`DEFAULT_RETRY_AFTER_SECS`]). Never cached.
pub fn problem(status: u16, code: &str, detail: &str, retry_after: Option<u64>) -> Response {
    let known = retry_after.filter(|n| *n > 0);
    let header = match (status, known) {
        (_, Some(n)) => Some(n),
        (429 | 503, None) => Some(DEFAULT_RETRY_AFTER_SECS),
        _ => None,
    };
    let mut body = Map::new();
    body.insert("type".into(), json!("about:blank"));
    body.insert("title".into(), json!(reason_phrase(status)));
    body.insert("status".into(), json!(status));
    body.insert("detail".into(), json!(detail));
    body.insert("code".into(), json!(code));
    if let Some(n) = known {
        body.insert("retry_after".into(), json!(n));
    }
    let bytes = crate::json::to_vec(&Value::Object(body));
    let mut r = Response::with_body(status, PROBLEM_MEDIA_TYPE, Body::Owned(bytes))
        .header("Cache-Control", "no-store");
    if let Some(n) = header {
        r = r.header("Retry-After", n.to_string());
    }
    r
}

/// A strong entity tag over `body`: the 128-bit FNV-1a hash in hex,
/// quoted (RFC 9110 §8.8.3). Equal bodies always get equal tags, on every
/// replica.
pub fn etag(body: &[u8]) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut h = OFFSET;
    for b in body {
        h ^= u128::from(*b);
        h = h.wrapping_mul(PRIME);
    }
    format!("\"{h:032x}\"")
}

/// Whether `If-None-Match` (all fields joined) matches `tag` with the weak
/// comparison RFC 9110 §13.1.2 prescribes; `*` matches any tag.
pub fn none_match(if_none_match: Option<&[u8]>, tag: &str) -> bool {
    let Some(v) = if_none_match else {
        return false;
    };
    let tag = tag.strip_prefix("W/").unwrap_or(tag).as_bytes();
    v.split(|b| *b == b',').any(|item| {
        let item = crate::text::trim_ows(item);
        item == b"*" || item.strip_prefix(b"W/").unwrap_or(item) == tag
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        assert_eq!(parse_query(None).unwrap(), vec![]);
        assert_eq!(
            parse_query(Some("q=fixture+cache&feed=latest&&cursor=a%3Ab%402&full")).unwrap(),
            vec![
                ("q".to_string(), "fixture cache".to_string()),
                ("feed".into(), "latest".into()),
                ("cursor".into(), "a:b@2".into()),
                ("full".into(), "".into())
            ]
        );
        assert_eq!(
            parse_query(Some("q=%F0%9F%A6%80")).unwrap()[0].1,
            "🦀".to_string()
        );
        assert_eq!(
            parse_query(Some("limit=1&limit=2")).unwrap_err(),
            "query parameter `limit` is given more than once"
        );
        assert_eq!(
            parse_query(Some("q=%ZZ")).unwrap_err(),
            "query parameter `q` is not valid percent-encoded UTF-8"
        );
        assert_eq!(
            parse_query(Some("q=%FF")).unwrap_err(),
            "query parameter `q` is not valid percent-encoded UTF-8"
        );
        assert!(parse_query(Some("q=%4")).is_err());
        // A long name is echoed cut, with the cut marked.
        let long = "n".repeat(MAX_ECHOED_NAME_CHARS + 1);
        assert_eq!(
            parse_query(Some(&format!("{long}=1&{long}=2"))).unwrap_err(),
            format!(
                "query parameter `{}…` is given more than once",
                "n".repeat(MAX_ECHOED_NAME_CHARS)
            )
        );
        let many: Vec<String> = (0..=MAX_QUERY_PARAMS).map(|i| format!("p{i}=1")).collect();
        assert_eq!(
            parse_query(Some(&many.join("&"))).unwrap_err(),
            "the query string has more than 32 parameters"
        );
    }

    #[test]
    fn problem_shape_and_retry_after() {
        let r = problem(503, "upstream_rate_limited", "slow down", None);
        assert_eq!(r.header_value("content-type"), Some(PROBLEM_MEDIA_TYPE));
        assert_eq!(r.header_value("retry-after"), Some("5"));
        assert_eq!(r.header_value("cache-control"), Some("no-store"));
        let v: Value = serde_json::from_slice(&r.body.to_vec()).unwrap();
        assert_eq!(
            v,
            json!({"type": "about:blank", "title": "Service Unavailable", "status": 503,
                   "detail": "slow down", "code": "upstream_rate_limited"})
        );
        let r = problem(404, "not_found", "gone", None);
        assert_eq!(r.header_value("retry-after"), None);
        let v: Value = serde_json::from_slice(&r.body.to_vec()).unwrap();
        assert!(v.get("retry_after").is_none());
        let r = problem(502, "fxtwitter_error", "x", Some(7));
        assert_eq!(r.header_value("retry-after"), Some("7"));
        let v: Value = serde_json::from_slice(&r.body.to_vec()).unwrap();
        assert_eq!(v["retry_after"], 7);
    }

    #[test]
    fn etags_and_matching() {
        assert_eq!(etag(b""), "\"6c62272e07bb014262b821756295c58d\"");
        assert_eq!(etag(b"a"), "\"d228cb696f1a8caf78912b704e4a8964\"");
        assert_ne!(etag(b"ab"), etag(b"ba"));
        let t = etag(b"body");
        assert!(none_match(Some(t.as_bytes()), &t));
        assert!(none_match(Some(format!("\"x\", W/{t}").as_bytes()), &t));
        assert!(none_match(Some(b"*"), &t));
        assert!(!none_match(Some(b"\"x\""), &t));
        assert!(!none_match(None, &t));
    }
}
