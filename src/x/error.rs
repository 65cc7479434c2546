//! Upstream failures as tool errors: one type, one Display, one mapping from
//! an upstream answer.
//!
//! Every failure becomes a *successful* `tools/call` result with
//! `isError: true` whose text is `<message> (HTTP <status>, code <code>[,
//! retry after <n>s])`. `status` is the status xmd's own HTTP surface would
//! use, not necessarily the upstream's.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::upstream::{FetchError, Keep, UpstreamResponse};

/// Retry hint used when a 429 carries no usable `Retry-After`.
/// Default 5 s; the agent sees `retry after 5s`.
pub const DEFAULT_RETRY_AFTER_SECS: u64 = 5;

/// Longest upstream `message` echoed into an error text, in characters.
/// Default 200; longer messages are cut and end in `…`.
pub const MAX_ECHOED_MESSAGE_CHARS: usize = 200;

/// A tool failure with its status, machine code and optional retry hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XError {
    /// HTTP status xmd reports for this failure.
    pub status: u16,
    /// Machine-readable code, e.g. `not_found`.
    pub code: &'static str,
    /// One human sentence.
    pub message: String,
    /// Seconds to wait before retrying, when known and positive.
    pub retry_after: Option<u64>,
}

/// Machine codes, so callers can match without string literals.
pub mod code {
    /// The upstream could not be reached at all.
    pub const NETWORK: &str = "fxtwitter_network";
    /// The upstream did not answer within the global timeout.
    pub const TIMEOUT: &str = "upstream_timeout";
    /// The upstream answered 429.
    pub const RATE_LIMITED: &str = "upstream_rate_limited";
    /// The upstream reported an error we do not map more precisely.
    pub const UPSTREAM_ERROR: &str = "fxtwitter_error";
    /// The body was not the JSON we expect (HTML, truncated, too large).
    pub const INVALID_RESPONSE: &str = "upstream_invalid_response";
    /// The post (or account) does not exist or is unavailable.
    pub const NOT_FOUND: &str = "not_found";
    /// The post belongs to a protected account.
    pub const PRIVATE: &str = "private_tweet";
    /// The tool exists but is not implemented in this build.
    pub const NOT_IMPLEMENTED: &str = "not_implemented";
    /// The account is suspended.
    pub const SUSPENDED: &str = "suspended";
    /// The account is protected: its posts and lists are not public.
    pub const PROTECTED: &str = "protected_account";
    /// X search is failing upstream (FxEmbed#2303); retry later.
    pub const SEARCH_UNAVAILABLE: &str = "search_unavailable";
    /// A `cursor` argument that this tool did not issue.
    pub const INVALID_CURSOR: &str = "invalid_cursor";
    /// xmd's global upstream request budget is spent for the moment.
    pub const UPSTREAM_BUDGET: &str = "upstream_budget";
    /// The upstream refused the request as invalid (HTTP 400).
    pub const BAD_REQUEST: &str = "upstream_bad_request";
    /// The call reached its deadline (`--call-timeout`) with nothing to show.
    pub const DEADLINE: &str = "deadline";
    /// The client closed its connection; the call stopped (never sent).
    pub const CANCELLED: &str = "cancelled";
    /// The tool calls' working budget (`--max-working-bytes`) had no room
    /// for this call in time; retry.
    pub const MEMORY_BUDGET: &str = "memory_budget";
}

/// The message of a call refused locally while FxTwitter's 429 cool-down
/// runs (no request was sent).
const COOLING_DOWN_MESSAGE: &str =
    "FxTwitter asked xmd to slow down; no request is sent until its cool-down ends.";

impl XError {
    /// True when this error is the local refusal during a 429 cool-down,
    /// not an answer of the upstream: of two concurrent requests that both
    /// failed, the other one's error names the cause.
    pub fn is_cooling_down(&self) -> bool {
        self.code == code::RATE_LIMITED && self.message == COOLING_DOWN_MESSAGE
    }

    /// Builds an error without a retry hint.
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> XError {
        XError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The error for a transport failure (no HTTP answer).
    pub fn from_fetch(e: &FetchError) -> XError {
        match e {
            FetchError::Connect(_) | FetchError::Other(_) | FetchError::Pending => {
                XError::new(502, code::NETWORK, "Failed to reach FxTwitter API.")
            }
            FetchError::Deadline(secs) => XError::new(
                504,
                code::DEADLINE,
                format!("The call reached its deadline of {secs} s (--call-timeout) before the upstream answered; retry, or ask for less (for a post thread=off or a smaller max_posts; for a list an earlier page)."),
            ),
            FetchError::Cancelled => XError::new(
                499,
                code::CANCELLED,
                "The client closed its connection; the call stopped.",
            ),
            FetchError::Timeout => {
                XError::new(504, code::TIMEOUT, "FxTwitter API did not answer in time.")
            }
            FetchError::CoolingDown(secs) => {
                let mut e = XError::new(503, code::RATE_LIMITED, COOLING_DOWN_MESSAGE);
                e.retry_after = Some(*secs);
                e
            }
            FetchError::BudgetExhausted(secs) => {
                let mut e = XError::new(
                    503,
                    code::UPSTREAM_BUDGET,
                    "xmd is at its own limit of requests to FxTwitter right now; no request was sent.",
                );
                e.retry_after = Some(*secs);
                e
            }
            FetchError::MemoryBudget(secs) => {
                let mut e = XError::new(
                    503,
                    code::MEMORY_BUDGET,
                    "xmd is at its memory budget for tool calls (--max-working-bytes) right now; nothing was read.",
                );
                e.retry_after = Some(*secs);
                e
            }
            FetchError::TooLarge => XError::new(
                502,
                code::INVALID_RESPONSE,
                "FxTwitter upstream returned an unexpected response (body too large).",
            ),
        }
    }

    /// The error for a body that is not a JSON object.
    pub fn unexpected_response() -> XError {
        XError::new(
            502,
            code::INVALID_RESPONSE,
            "FxTwitter upstream returned an unexpected response (not the JSON it should send).",
        )
    }

    /// True for a protected-account refusal (never retried elsewhere).
    pub fn is_private(&self) -> bool {
        self.code == code::PRIVATE
    }

    /// True when another request to the same upstream is pointless now
    /// (private, rate limited, unreachable, timed out).
    pub fn is_final(&self) -> bool {
        matches!(
            self.code,
            code::PRIVATE
                | code::RATE_LIMITED
                | code::UPSTREAM_BUDGET
                | code::MEMORY_BUDGET
                | code::NETWORK
                | code::TIMEOUT
        )
    }
}

impl fmt::Display for XError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (HTTP {}, code {}",
            self.message, self.status, self.code
        )?;
        if let Some(n) = self.retry_after.filter(|n| *n > 0) {
            write!(f, ", retry after {n}s")?;
        }
        f.write_str(")")
    }
}

/// A FxTwitter post answer (`/2/status`, `/2/thread`, `/2/conversation`)
/// read into the typed envelope `T`: the transport checks, 401/403 as
/// private, a body of the wrong shape as `upstream_invalid_response`
/// naming the field (`what` names the answer), then the answer's own
/// `code` and `message` (see [`check_post_code`]). `keep` (the cache's
/// question) is answered from the envelope as it is read
/// ([`super::typed_read::storable`]); an answer refused before that is not
/// stored.
pub fn check_post_answer<T: serde::de::DeserializeOwned>(
    resp: &UpstreamResponse,
    keep: Keep,
    what: &str,
    code_of: impl FnOnce(
        &T,
    ) -> (
        Option<u64>,
        Option<&str>,
        Option<(Option<&str>, Option<&str>)>,
    ),
) -> Result<T, XError> {
    check_transport(resp)?;
    if resp.status == 401 || resp.status == 403 {
        return Err(private_error());
    }
    let body: T = super::model::parse::parse(&resp.body, what)?;
    let (body_code, message, tomb) = code_of(&body);
    keep.answer(super::typed_read::storable(resp.status, Some(body_code)));
    check_post_code(resp, body_code, message, tomb)?;
    Ok(body)
}

/// The answer's `code` and `message` (and the `status` tombstone's
/// `reason` and `message`, if any): private, not found, or an upstream
/// error when the HTTP status or `code` says so.
fn check_post_code(
    resp: &UpstreamResponse,
    body_code: Option<u64>,
    message: Option<&str>,
    tomb: Option<(Option<&str>, Option<&str>)>,
) -> Result<(), XError> {
    if message == Some("PRIVATE_TWEET") || matches!(body_code, Some(401 | 403)) {
        return Err(private_error());
    }
    if resp.status == 404 || body_code == Some(404) || message == Some("NOT_FOUND") {
        return Err(not_found_error(tomb));
    }
    if !(200..300).contains(&resp.status) || body_code.is_some_and(|c| c >= 400) {
        let what = match message {
            Some(m) => clip_message(m),
            None => format!("HTTP {}", resp.status),
        };
        return Err(XError::new(
            502,
            code::UPSTREAM_ERROR,
            format!("FxTwitter API error: {what}."),
        ));
    }
    Ok(())
}

/// The checks every upstream answer goes through first: 429 (with its
/// retry hint) and 5xx become errors; anything else passes.
pub fn check_transport(resp: &UpstreamResponse) -> Result<(), XError> {
    if resp.status == 429 {
        let secs = resp
            .retry_after
            .as_deref()
            .and_then(|v| parse_retry_after(v, now_unix()))
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_RETRY_AFTER_SECS);
        let mut e = XError::new(
            503,
            code::RATE_LIMITED,
            "FxTwitter is rate limiting xmd right now.",
        );
        e.retry_after = Some(secs);
        return Err(e);
    }
    if resp.status >= 500 {
        let mut e = XError::new(
            502,
            code::UPSTREAM_ERROR,
            format!("FxTwitter API error: HTTP {}.", resp.status),
        );
        e.retry_after = resp
            .retry_after
            .as_deref()
            .and_then(|v| parse_retry_after(v, now_unix()));
        return Err(e);
    }
    Ok(())
}

/// The body as a JSON object, or [`XError::unexpected_response`]. Lone
/// surrogate escapes become U+FFFD first (see
/// [`super::model::parse::repair_surrogates`]).
///
/// The body is checked as UTF-8 once, in bulk, and then parsed as a `str`:
/// cheaper than letting the parser validate every string on its own.
pub fn parse_object(resp: &UpstreamResponse) -> Result<Value, XError> {
    let Ok(text) = std::str::from_utf8(&resp.body) else {
        return Err(XError::unexpected_response());
    };
    if super::model::parse::too_deep(text) {
        return Err(super::model::parse::too_deep_error("an answer"));
    }
    let text = super::model::parse::repair_surrogates(text);
    match serde_json::from_str(&text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Err(e) if super::model::parse::is_too_deep(&e) => {
            Err(super::model::parse::too_deep_error("an answer"))
        }
        _ => Err(XError::unexpected_response()),
    }
}

/// Cuts upstream text to [`MAX_ECHOED_MESSAGE_CHARS`], blanks control
/// characters and escapes it for one inline Markdown position (as the
/// result's warnings are: [`crate::x::render::escape::escape_inline`]), so
/// an upstream cannot flood or reshape the error line, nor put a link,
/// emphasis or HTML into an `isError` text.
pub fn clip_message(s: &str) -> String {
    crate::x::render::escape::escape_inline(&crate::text::clip_inert(s, MAX_ECHOED_MESSAGE_CHARS))
}

fn private_error() -> XError {
    XError::new(
        403,
        code::PRIVATE,
        "Post is from a protected account and cannot be fetched.",
    )
}

fn not_found_error(tomb: Option<(Option<&str>, Option<&str>)>) -> XError {
    if let Some((reason, msg)) = tomb {
        let reason = reason.unwrap_or("unavailable");
        let msg = msg.unwrap_or("This post is unavailable");
        return XError::new(
            404,
            code::NOT_FOUND,
            format!(
                "Post unavailable ({}): {}.",
                clip_message(reason),
                clip_message(msg).trim_end_matches('.')
            ),
        );
    }
    XError::new(
        404,
        code::NOT_FOUND,
        "Post not found or unavailable; it may be deleted, private or age-restricted.",
    )
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Parses a `Retry-After` value (RFC 9110 §10.2.3): delay-seconds, or an
/// IMF-fixdate turned into seconds from `now` (at least 1). `None` when
/// unparsable.
pub fn parse_retry_after(value: &str, now: u64) -> Option<u64> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse::<u64>().ok().or(Some(u64::MAX));
    }
    let at = parse_imf_fixdate(v)?;
    Some(at.saturating_sub(now).max(1))
}

/// Parses `Sun, 06 Nov 1994 08:49:37 GMT` into unix seconds.
fn parse_imf_fixdate(v: &str) -> Option<u64> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.len() != 6 || !parts[0].ends_with(',') || parts[5] != "GMT" {
        return None;
    }
    let day: u64 = parts[1].parse().ok()?;
    let month = u64::from(crate::calendar::month_number(parts[2])?);
    let year: u64 = parts[3].parse().ok()?;
    let hms: Vec<u64> = parts[4]
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if hms.len() != 3
        || !(1..=31).contains(&day)
        || year < 1970
        || hms[0] > 23
        || hms[1] > 59
        || hms[2] > 60
    {
        return None;
    }
    let days = crate::calendar::days_from_civil(year as i64, month as i64, day as i64);
    Some(days as u64 * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x::model::status::{Status, StatusEnvelope};

    /// A `/2/status` answer checked the way the post tool reads it.
    fn check_post_response(resp: &UpstreamResponse) -> Result<StatusEnvelope, XError> {
        check_post_answer(
            resp,
            Keep::none(),
            "a status answer",
            |e: &StatusEnvelope| {
                (
                    e.code,
                    e.message.as_deref(),
                    e.status.as_ref().and_then(Status::tombstone),
                )
            },
        )
    }

    fn resp(status: u16, body: &str) -> UpstreamResponse {
        UpstreamResponse {
            status,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: body.as_bytes().into(),
        }
    }

    #[test]
    fn an_exhausted_budget_is_a_final_retryable_503() {
        let e = XError::from_fetch(&FetchError::BudgetExhausted(2));
        assert_eq!(
            e.to_string(),
            "xmd is at its own limit of requests to FxTwitter right now; no request was sent. \
             (HTTP 503, code upstream_budget, retry after 2s)"
        );
        assert!(e.is_final(), "no fallback request may spend more budget");
    }

    #[test]
    fn display_with_and_without_retry() {
        let mut e = XError::new(503, code::RATE_LIMITED, "Slow down.");
        assert_eq!(
            e.to_string(),
            "Slow down. (HTTP 503, code upstream_rate_limited)"
        );
        e.retry_after = Some(30);
        assert_eq!(
            e.to_string(),
            "Slow down. (HTTP 503, code upstream_rate_limited, retry after 30s)"
        );
        e.retry_after = Some(0);
        assert_eq!(
            e.to_string(),
            "Slow down. (HTTP 503, code upstream_rate_limited)"
        );
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("30", 0), Some(30));
        assert_eq!(parse_retry_after(" 7 ", 0), Some(7));
        // 1994-11-06T08:49:37Z = 784111777
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777 - 42),
            Some(42)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777 + 5),
            Some(1)
        );
        assert_eq!(parse_retry_after("soon", 0), None);
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 PST", 0), None);
    }

    #[test]
    fn both_not_found_shapes() {
        let v2 = check_post_response(&resp(
            404,
            r#"{"code":404,"status":null,"thread":null,"author":null}"#,
        ));
        let v1 = check_post_response(&resp(
            404,
            r#"{"code":404,"message":"NOT_FOUND","tweet":null}"#,
        ));
        let e = v2.unwrap_err();
        assert_eq!(e, v1.unwrap_err());
        assert_eq!(
            e.to_string(),
            "Post not found or unavailable; it may be deleted, private or age-restricted. (HTTP 404, code not_found)"
        );
    }

    #[test]
    fn tombstone_404_names_reason() {
        let e = check_post_response(&resp(
            404,
            r#"{"status":{"type":"tombstone","reason":"suspended","message":"This post is from a suspended account"},"code":404}"#,
        ))
        .unwrap_err();
        assert_eq!(
            e.message,
            "Post unavailable (suspended): This post is from a suspended account."
        );
    }

    #[test]
    fn html_and_truncated_are_unexpected() {
        let mut html = resp(
            200,
            "<!DOCTYPE html><html><body><h1>Owie</h1></body></html>",
        );
        html.content_type = Some("text/html".into());
        let e = check_post_response(&html).unwrap_err();
        assert_eq!(e.code, code::INVALID_RESPONSE);
        assert!(!e.to_string().contains('<'));
        let e = check_post_response(&resp(200, r#"{"code":200,"status":{"id":"18"#)).unwrap_err();
        assert_eq!(e.code, code::INVALID_RESPONSE);
    }

    #[test]
    fn other_errors_echo_clipped_message() {
        let e = check_post_response(&resp(
            400,
            r#"{"code":400,"message":"id: tweet ID must be a numeric snowflake"}"#,
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "FxTwitter API error: id: tweet ID must be a numeric snowflake. (HTTP 502, code fxtwitter_error)"
        );
        let long = format!(r#"{{"code":400,"message":"{}"}}"#, "a".repeat(500));
        let e = check_post_response(&resp(400, &long)).unwrap_err();
        assert_eq!(
            e.message.chars().count(),
            "FxTwitter API error: .".len() + MAX_ECHOED_MESSAGE_CHARS + 1
        );
    }
}
