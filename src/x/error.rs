//! Upstream failures as tool errors: one type, one Display, one mapping from
//! an upstream answer.
//!
//! Every failure becomes a *successful* `tools/call` result with
//! `isError: true` whose text is `<message> (HTTP <status>, code <code>[,
//! retry after <n>s])`. `status` is the status xmd's own HTTP surface would
//! use, not necessarily the upstream's.

use std::fmt;

/// Retry hint used when a 429 carries no usable `Retry-After` (none, or a
/// value that is neither delay-seconds nor an HTTP-date in one of its three
/// forms: `x::retry_after`). Default 5 s; the agent sees `retry after 5s`
/// and the upstream base cools for 5 s.
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
pub(crate) const COOLING_DOWN_MESSAGE: &str =
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

/// Cuts upstream text to [`MAX_ECHOED_MESSAGE_CHARS`], blanks control
/// characters and escapes it for one inline Markdown position (as the
/// result's warnings are: [`crate::x::escape::escape_inline`]), so
/// an upstream cannot flood or reshape the error line, nor put a link,
/// emphasis or HTML into an `isError` text.
pub fn clip_message(s: &str) -> String {
    crate::x::escape::escape_inline(&crate::text::clip_inert(s, MAX_ECHOED_MESSAGE_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
