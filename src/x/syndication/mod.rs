//! The second provider of single posts: X's public syndication endpoint,
//! the one embedded posts on web pages read
//! (`GET <base>/tweet-result?id=<id>&token=<token>&lang=en`, no key).
//!
//! When FxTwitter fails for the requested post ([`is_outage`]: no answer,
//! a timeout, a 429 or its cool-down, a 5xx, a body that is not JSON),
//! `post.rs` asks [`read`] for it. The answer goes through the same
//! response cache (via [`crate::x::upstream::Upstream::get_fallback`]),
//! and [`map::to_status`] turns it into the FxTwitter status shape the
//! renderer and `structuredContent` already read. A real 404 or 401/403
//! from FxTwitter is the truth about the post: no fallback then.
//!
//! What the endpoint cannot give: the thread, the replies, and the main
//! post's repost, quote, bookmark and view counts ([`note`] says so in the
//! result).

pub mod card;
pub mod map;
pub mod token;

use serde_json::Value;

use super::answer::parse_object;
use super::error::{clip_message, code, XError};
use super::upstream::{FetchError, Upstream, UpstreamResponse};

/// `structuredContent.source` of a post read from this provider.
pub const SOURCE: &str = "syndication";

/// The request path (and query) for post `id`.
pub fn path(id: &str) -> String {
    format!("/tweet-result?id={id}&token={}&lang=en", token::token(id))
}

/// True when FxTwitter's answer to a post read is an outage rather than
/// the truth about the post: no answer (refused, unreachable, timed out,
/// cooling down after a 429), 429, 5xx, or a body that is not a JSON
/// object (an HTML error page), also a JSON body whose own `code` is 5xx.
/// False for 401/403/404 and other JSON answers, when xmd's own upstream
/// budget is spent (the fallback would only spend more), and when the call
/// reached its deadline or its client left.
pub fn is_outage(answer: &Result<UpstreamResponse, FetchError>) -> bool {
    match answer {
        // Not outages: xmd's own budget, or the call's own end.
        Err(FetchError::BudgetExhausted(_))
        | Err(FetchError::MemoryBudget(_))
        | Err(FetchError::Deadline(_))
        | Err(FetchError::Cancelled) => false,
        Err(_) => true,
        Ok(r) if r.status == 429 || r.status >= 500 => true,
        Ok(r) if r.status == 401 || r.status == 403 => false,
        Ok(r) => match parse_object(r) {
            Err(_) => true,
            Ok(body) => body
                .get("code")
                .and_then(Value::as_u64)
                .is_some_and(|c| c >= 500),
        },
    }
}

/// True for the tool errors that only an FxTwitter outage produces (it
/// could not be reached, timed out, or is rate limiting xmd), for callers
/// that hold the error but no longer the answer.
pub fn is_outage_error(e: &XError) -> bool {
    matches!(e.code, code::NETWORK | code::TIMEOUT | code::RATE_LIMITED)
}

/// The note a fallback result carries (Markdown and `warnings`).
pub fn note(fx: &XError) -> String {
    format!(
        "FxTwitter failed (code {}), so this post comes from the fallback, X's syndication \
         endpoint. It cannot include the thread, the replies, or the repost, quote, bookmark \
         and view counts.",
        fx.code
    )
}

/// Why the syndication endpoint gave no post.
enum Failure {
    /// It knows no such post (404, tombstone, empty object).
    NotFound(Option<String>),
    /// It failed; the text says how.
    Down(String),
}

/// The post `id` in the endpoint's `answer`, or why there is none.
///
/// Not found: a `404`, a tombstone, or an empty object (`{}`). Any other
/// JSON object without a post in it (an error object such as
/// `{"errors":[…]}` or `{"code":500}` sent with `200`), or a post with
/// another id than the one asked for, is a failure of the endpoint, not
/// the truth about the post.
fn failure_of(answer: &Result<UpstreamResponse, FetchError>, id: &str) -> Result<Value, Failure> {
    let resp = match answer {
        Ok(r) => r,
        Err(e) => {
            return Err(Failure::Down(match e {
                FetchError::Timeout => "it did not answer in time".into(),
                FetchError::TooLarge => "its body was too large".into(),
                FetchError::CoolingDown(n) => {
                    format!("it asked xmd to slow down (retry after {n}s)")
                }
                FetchError::BudgetExhausted(n) => {
                    format!("xmd's upstream budget is spent (retry after {n}s)")
                }
                FetchError::MemoryBudget(n) => {
                    format!("xmd's memory budget for tool calls is full (retry after {n}s)")
                }
                FetchError::Connect(_) | FetchError::Other(_) => "it could not be reached".into(),
                FetchError::Deadline(_) => "the call reached its deadline first".into(),
                FetchError::Cancelled => "the client left first".into(),
            }))
        }
    };
    match resp.status {
        200 => {}
        404 => return Err(Failure::NotFound(None)),
        429 => return Err(Failure::Down("it is rate limiting xmd".into())),
        s => return Err(Failure::Down(format!("it answered HTTP {s}"))),
    }
    let not_json =
        || Failure::Down("it sent an unexpected response (not the JSON it should send)".into());
    let text = std::str::from_utf8(&resp.body).map_err(|_| not_json())?;
    if crate::x::model::parse::too_deep(text) {
        return Err(Failure::Down(format!(
            "its JSON is nested deeper than {} levels, which xmd does not read",
            crate::x::model::parse::MAX_JSON_DEPTH
        )));
    }
    let text = crate::x::model::parse::repair_surrogates(text);
    let not_a_post = || Failure::Down("it sent an unexpected response (not a post object)".into());
    // Read as text into the typed Tweet (whose quotes are counted), never
    // through a `Value` (whose conversion recursed once per level).
    let tweet: map::Tweet = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(o)) if o.is_empty() => return Err(Failure::NotFound(None)),
        Ok(Value::Object(_)) => serde_json::from_str(&text).map_err(|_| not_a_post())?,
        _ => return Err(not_json()),
    };
    if tweet.is_tombstone() {
        return Err(Failure::NotFound(tweet.tombstone_text().map(clip_message)));
    }
    let post = map::to_status(&tweet).ok_or_else(not_a_post)?;
    let wanted = id.trim_start_matches('0');
    match post.get("id").and_then(Value::as_str) {
        Some(got) if got.trim_start_matches('0') == wanted => Ok(post),
        Some(got) => Err(Failure::Down(format!(
            "it sent another post ({}) than the one asked for",
            clip_message(got)
        ))),
        None => Err(not_a_post()),
    }
}

/// Reads post `id` from the syndication endpoint after FxTwitter failed
/// with `fx`. Without a configured endpoint, `fx` itself. When the
/// endpoint knows no such post: a `not_found` error saying where that was
/// learnt. When it fails too: `fx` (status, code, retry hint) with both
/// failures in its message.
pub fn read(up: &dyn Upstream, id: &str, fx: XError) -> Result<Value, XError> {
    let Some(answer) = up.get_fallback(&path(id)) else {
        return Err(fx);
    };
    match failure_of(&answer, id) {
        Ok(post) => Ok(post),
        Err(Failure::NotFound(why)) => {
            let what = match why {
                Some(t) => format!("Post unavailable at X's syndication endpoint: {}", t.trim_end_matches('.')),
                None => "Post not found or unavailable at X's syndication endpoint; it may be deleted, private or age-restricted".into(),
            };
            Err(XError::new(
                404,
                code::NOT_FOUND,
                format!(
                    "{what} (asked because FxTwitter failed with code {}).",
                    fx.code
                ),
            ))
        }
        Err(Failure::Down(how)) => Err(XError {
            message: format!(
                "{} The fallback, X's syndication endpoint, failed too: {how}.",
                fx.message
            ),
            ..fx
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn resp(status: u16, body: &str) -> Result<UpstreamResponse, FetchError> {
        Ok(UpstreamResponse {
            status,
            retry_after: None,
            content_type: None,
            body: body.as_bytes().into(),
        })
    }

    #[test]
    fn outages_and_truths() {
        for yes in [
            Err(FetchError::Connect("refused".into())),
            Err(FetchError::Timeout),
            Err(FetchError::CoolingDown(3)),
            Err(FetchError::TooLarge),
            Err(FetchError::Other("x".into())),
            resp(500, "{}"),
            resp(503, "<html>"),
            resp(429, r#"{"code":429}"#),
            resp(200, "<!DOCTYPE html><html></html>"),
            resp(404, "<html>Not Found</html>"),
            resp(200, r#"{"code":500,"message":"API_FAIL","tweet":null}"#),
            resp(200, r#"{"code":200,"status":{"id":"1""#),
        ] {
            assert!(is_outage(&yes), "{yes:?}");
        }
        for no in [
            Err(FetchError::BudgetExhausted(1)),
            resp(404, r#"{"code":404,"message":"NOT_FOUND"}"#),
            resp(401, r#"{"code":401,"message":"PRIVATE_TWEET"}"#),
            resp(403, "<html>"),
            resp(400, r#"{"code":400,"message":"bad id"}"#),
            resp(200, r#"{"code":200,"status":{"id":"1"}}"#),
        ] {
            assert!(!is_outage(&no), "{no:?}");
        }
    }

    #[test]
    fn request_path_carries_id_and_token() {
        assert_eq!(
            path("1800000000000000001"),
            "/tweet-result?id=1800000000000000001&token=4d2v7cbm2xj&lang=en"
        );
    }

    #[test]
    fn endpoint_outcomes() {
        assert!(failure_of(
            &resp(200, r#"{"__typename":"Tweet","id_str":"5","text":"hi"}"#),
            "5"
        )
        .is_ok());
        for (answer, want) in [
            (resp(404, ""), None),
            (resp(200, "{}"), None),
            (
                resp(
                    200,
                    r#"{"__typename":"TweetTombstone","tombstone":{"text":{"text":"This Post was deleted by the Post author."}}}"#,
                ),
                Some("This Post was deleted by the Post author."),
            ),
        ] {
            match failure_of(&answer, "5") {
                Err(Failure::NotFound(w)) => assert_eq!(w.as_deref(), want),
                _ => panic!("not a not-found: {answer:?}"),
            }
        }
        for (answer, want) in [
            (resp(503, "{}"), "it answered HTTP 503"),
            (resp(429, ""), "it is rate limiting xmd"),
            (
                resp(200, "<html>"),
                "it sent an unexpected response (not the JSON it should send)",
            ),
            (
                resp(200, r#"{"id_str":5}"#),
                "it sent an unexpected response (not a post object)",
            ),
            (
                resp(200, r#"{"code":500,"message":"Internal Server Error"}"#),
                "it sent an unexpected response (not a post object)",
            ),
            (
                resp(
                    200,
                    r#"{"errors":[{"code":88,"message":"Rate limit exceeded"}]}"#,
                ),
                "it sent an unexpected response (not a post object)",
            ),
            (
                resp(200, r#"{"__typename":"Tweet","id_str":"6","text":"hi"}"#),
                "it sent another post (6) than the one asked for",
            ),
            (Err(FetchError::Timeout), "it did not answer in time"),
            (
                Err(FetchError::CoolingDown(7)),
                "it asked xmd to slow down (retry after 7s)",
            ),
        ] {
            match failure_of(&answer, "5") {
                Err(Failure::Down(how)) => assert_eq!(how, want),
                _ => panic!("not a failure: {answer:?}"),
            }
        }
    }

    proptest::proptest! {
        /// The class of 200 answers that hold no post: any JSON object
        /// without a post id, tombstone or type is the endpoint failing,
        /// except the empty object, its "no such post". Judged by that
        /// rule, not by the code under test.
        #[test]
        fn objects_without_a_post_are_failures_not_not_found(
            members in proptest::collection::btree_map(
                "[a-z_]{1,10}".prop_filter("not a post member", |k| {
                    !matches!(k.as_str(), "id_str" | "tombstone" | "__typename")
                }),
                proptest::prop_oneof![
                    Just(Value::Null),
                    any::<i64>().prop_map(Value::from),
                    any::<bool>().prop_map(Value::from),
                    "[ -~]{0,12}".prop_map(Value::from),
                ],
                0..6,
            )
        ) {
            let body = Value::Object(members.into_iter().collect()).to_string();
            let empty = body == "{}";
            match failure_of(&resp(200, &body), "5") {
                Err(Failure::NotFound(None)) => proptest::prop_assert!(empty, "{}", body),
                Err(Failure::Down(_)) => proptest::prop_assert!(!empty, "{}", body),
                _ => proptest::prop_assert!(false, "{}", body),
            }
        }
    }
}
