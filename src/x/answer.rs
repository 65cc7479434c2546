//! An upstream answer (or its absence) as a tool error: the transport
//! checks every answer goes through (429 with its retry hint, 5xx), the
//! post answers' own codes, the body as JSON, and a failed fetch as
//! [`XError`]. The upstream layer's half of `error.rs` (which is a leaf:
//! the error type, its codes and its text).

use serde_json::Value;

use super::error::{clip_message, code, XError, COOLING_DOWN_MESSAGE};
use super::model::scalar::Count;
use super::retry_after::{now_unix, parse_retry_after};
use super::upstream::{
    ceil_secs, retry_after_of, FetchError, Keep, UpstreamResponse, MAX_COOLDOWN,
};

impl XError {
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
}

/// Whether an answer read by a typed parse may be stored: `status` is 200
/// and `parsed` (the envelope's `code`, `None` when the parse refused the
/// body) is a `code` that is absent or below 500.
pub fn storable(status: u16, parsed: Option<Count>) -> bool {
    status == 200 && parsed.is_some_and(|code| code.is_none_or(|c| c < 500))
}

/// A FxTwitter post answer (`/2/status`, `/2/thread`, `/2/conversation`)
/// read into the typed envelope `T`: the transport checks, 401/403 as
/// private, a body of the wrong shape as `upstream_invalid_response`
/// naming the field (`what` names the answer), then the answer's own
/// `code` and `message` (see [`check_post_code`]). `keep` (the cache's
/// question) is answered from the envelope as it is read
/// ([`storable`]); an answer refused before that is not
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
    keep.answer(storable(resp.status, Some(body_code)));
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
        // The wait the upstream cools for, as the agent is told it: one
        // reading, capped at `MAX_COOLDOWN`.
        let secs = ceil_secs(retry_after_of(resp));
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
            .and_then(|v| parse_retry_after(v, now_unix()))
            .map(|n| n.min(MAX_COOLDOWN.as_secs()));
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

    use crate::x::error::MAX_ECHOED_MESSAGE_CHARS;

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
