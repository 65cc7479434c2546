//! An [`Upstream`] decorator that counts every upstream request by status
//! and records its latency in the process metrics, and remembers, per
//! thread, why the last upstream request failed ([`Cause`]) so the access
//! log line of a failed tool call can name it.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

use crate::metrics::{METRICS, UPSTREAM};
use crate::x::upstream::{FetchError, Upstream, UpstreamResponse};

/// Why an upstream request failed, as an operator reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The upstream host name did not resolve.
    Dns,
    /// The upstream refused the connection.
    Refused,
    /// The connection was reset or dropped.
    Reset,
    /// Connecting failed otherwise (TLS, unreachable).
    Connect,
    /// The request timed out (`--upstream-timeout`).
    Timeout,
    /// The body passed the size limit.
    TooLarge,
    /// Any other transport failure.
    Network,
    /// The upstream answered with this HTTP status (4xx or 5xx).
    Status(u16),
    /// The upstream answered with this (2xx or 3xx) status but a body that
    /// is not the JSON it should send (a tool error
    /// `upstream_invalid_response`).
    InvalidBody(u16),
}

impl Cause {
    /// Labels of `xmd_upstream_failures_total`, in [`Cause::label`] order
    /// (every status is `status`).
    pub const LABELS: [&'static str; 9] = crate::metrics::FAILURE_CAUSES;

    /// The metrics label.
    pub fn label(self) -> &'static str {
        Cause::LABELS[match self {
            Cause::Dns => 0,
            Cause::Refused => 1,
            Cause::Reset => 2,
            Cause::Connect => 3,
            Cause::Timeout => 4,
            Cause::TooLarge => 5,
            Cause::Network => 6,
            Cause::Status(_) => 7,
            Cause::InvalidBody(_) => 8,
        }]
    }

    /// The cause of a failed fetch; `None` when no request was sent (a
    /// cool-down or the budget answered locally).
    pub fn of_error(e: &FetchError) -> Option<Cause> {
        Some(match e {
            FetchError::Connect(msg) => classify_connect(msg),
            FetchError::Timeout => Cause::Timeout,
            FetchError::TooLarge => Cause::TooLarge,
            FetchError::Other(msg) => match classify_connect(msg) {
                Cause::Connect => Cause::Network,
                c => c,
            },
            FetchError::CoolingDown(_)
            | FetchError::BudgetExhausted(_)
            | FetchError::MemoryBudget(_)
            | FetchError::Deadline(_)
            | FetchError::Cancelled => return None,
        })
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Status(s) => write!(f, "upstream_status_{s}"),
            Cause::InvalidBody(s) => write!(f, "upstream_status_{s}_invalid_body"),
            other => f.write_str(other.label()),
        }
    }
}

/// Reads a transport error message (ureq's or the OS's wording).
fn classify_connect(msg: &str) -> Cause {
    let m = msg.to_ascii_lowercase();
    if m.contains("host not found")
        || m.contains("lookup")
        || m.contains("name or service not known")
        || m.contains("resolve")
        || m.contains("no address")
        || m.contains("nodename")
    {
        Cause::Dns
    } else if m.contains("refused") {
        Cause::Refused
    } else if m.contains("reset") || m.contains("broken pipe") || m.contains("not connected") {
        Cause::Reset
    } else {
        Cause::Connect
    }
}

thread_local! {
    /// The cause of the last failed upstream request made on this thread.
    static LAST_CAUSE: Cell<Option<Cause>> = const { Cell::new(None) };
    /// The status of the last upstream request on this thread that was
    /// answered below 400 (for [`Cause::InvalidBody`]).
    static LAST_OK_STATUS: Cell<Option<u16>> = const { Cell::new(None) };
    /// The metrics label of the last request this thread sent to the post
    /// fallback (`200`, `503`, `timeout`, `network`, …).
    static LAST_FALLBACK: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Takes (and clears) the cause of the last upstream failure on this
/// thread. A tool call runs its main fetch on its worker thread, so after
/// the call this names what broke it.
pub fn take_cause() -> Option<Cause> {
    LAST_OK_STATUS.with(Cell::take);
    LAST_FALLBACK.with(Cell::take);
    LAST_CAUSE.with(Cell::take)
}

/// For a tool call that ended `isError` with `code`: counts it in
/// `xmd_tool_errors_total` and returns the access log's `error=` value,
/// `code` plus the cause of this thread's last upstream failure, if any
/// (`fxtwitter_network cause=dns`). Call [`take_cause`] before the call.
pub fn failure_note(code: &'static str) -> Box<str> {
    METRICS.tool_error(code);
    let ok_status = LAST_OK_STATUS.with(Cell::get);
    let fallback = LAST_FALLBACK.with(Cell::get);
    let cause = match take_cause() {
        // The body of an answered request was not FxTwitter's JSON: the
        // transport saw no failure, so the cause is named here.
        // So is an answered request the post fallback was asked after.
        None if code == crate::x::error::code::INVALID_RESPONSE || fallback.is_some() => {
            invalid_body(ok_status)
        }
        // Refused here, before any request: an earlier request's failure
        // in the same call is not its cause.
        _ if code == crate::x::error::code::UPSTREAM_BUDGET => None,
        cause => cause,
    };
    let mut note = match cause {
        Some(cause) => format!("{code} cause={cause}"),
        None => code.to_string(),
    };
    // The post fallback was asked too: what it answered.
    if let Some(label) = fallback {
        note.push_str(&format!(" fallback=syndication_{label}"));
    }
    note.into_boxed_str()
}

/// For a tool call that a fallback provider (`source`) served: the access
/// log's `fallback=` value, the provider plus the cause of FxTwitter's
/// failure on this thread, if known (`syndication after=upstream_status_500`;
/// unknown when the result came from the result cache or another call's
/// shared request).
pub fn fallback_note(source: &'static str) -> Box<str> {
    let ok_status = LAST_OK_STATUS.with(Cell::get);
    match take_cause().or_else(|| invalid_body(ok_status)) {
        Some(cause) => format!("{source} after={cause}").into_boxed_str(),
        None => source.into(),
    }
}

/// The cause of a call whose last upstream answer (status `ok_status`,
/// below 400) had a body that is not FxTwitter's JSON; counted in
/// `xmd_upstream_failures_total`, which the transport could not do.
fn invalid_body(ok_status: Option<u16>) -> Option<Cause> {
    ok_status.map(|s| {
        METRICS.upstream_failure(Cause::InvalidBody(s).label());
        Cause::InvalidBody(s)
    })
}

/// Wraps an upstream and meters it.
pub struct Metered(pub Arc<dyn Upstream>);

/// The metrics label of an upstream answer; `None` when no request was
/// made (answered locally during a cool-down or with the budget spent).
fn label(result: &Result<UpstreamResponse, FetchError>) -> Option<&'static str> {
    Some(match result {
        Ok(r) => {
            let code = r.status.to_string();
            UPSTREAM
                .iter()
                .copied()
                .find(|l| *l == code)
                .unwrap_or("other")
        }
        Err(FetchError::Timeout) => "timeout",
        Err(FetchError::TooLarge) => "too_large",
        Err(FetchError::Connect(_)) | Err(FetchError::Other(_)) => "network",
        // Answered locally (a cool-down, the budget, the call's deadline or
        // its cancellation): no upstream request was made.
        Err(FetchError::CoolingDown(_))
        | Err(FetchError::BudgetExhausted(_))
        | Err(FetchError::MemoryBudget(_))
        | Err(FetchError::Deadline(_))
        | Err(FetchError::Cancelled) => return None,
    })
}

impl Upstream for Metered {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let started = Instant::now();
        let result = self.0.get(path_and_query);
        record_failure(&result);
        if let Some(label) = label(&result) {
            METRICS.upstream(label, started.elapsed());
        }
        result
    }
}

/// Remembers (for this thread's access log line) and counts the cause of
/// a failed upstream request; a request that was never sent (cool-down,
/// budget) or that succeeded records nothing.
fn record_failure(result: &Result<UpstreamResponse, FetchError>) {
    // The log names the cause of the call's last upstream attempt: an
    // earlier failure (a thread 404 before its post fallback) is forgotten
    // once a later request is answered or refused locally, so an
    // `upstream_budget` refusal never carries an older request's status.
    let ok_status = match result {
        Ok(r) if r.status < 400 => Some(r.status),
        _ => None,
    };
    LAST_OK_STATUS.with(|c| c.set(ok_status));
    let cause = match result {
        Ok(r) if r.status >= 400 => Cause::Status(r.status),
        Ok(_) => {
            LAST_CAUSE.with(|c| c.set(None));
            return;
        }
        Err(e) => match Cause::of_error(e) {
            Some(cause) => cause,
            None => {
                LAST_CAUSE.with(|c| c.set(None));
                return;
            }
        },
    };
    LAST_CAUSE.with(|c| c.set(Some(cause)));
    METRICS.upstream_failure(cause.label());
}

/// Wraps the post fallback (X's syndication endpoint) and counts its
/// requests by status in their own series,
/// `xmd_syndication_requests_total`.
pub struct MeteredFallback(pub Arc<dyn Upstream>);

impl Upstream for MeteredFallback {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let result = self.0.get(path_and_query);
        let label = label(&result);
        if let Some(label) = label {
            METRICS.syndication(label);
        }
        LAST_FALLBACK.with(|c| c.set(label));
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_from_messages() {
        let c = |m: &str| Cause::of_error(&FetchError::Connect(m.into()));
        assert_eq!(c("host not found"), Some(Cause::Dns));
        assert_eq!(
            c("io: failed to lookup address information: Name or service not known"),
            Some(Cause::Dns)
        );
        assert_eq!(c("Connection refused (os error 111)"), Some(Cause::Refused));
        assert_eq!(
            c("Connection reset by peer (os error 104)"),
            Some(Cause::Reset)
        );
        assert_eq!(c("connection failed"), Some(Cause::Connect));
        assert_eq!(
            Cause::of_error(&FetchError::Other("protocol".into())),
            Some(Cause::Network)
        );
        assert_eq!(Cause::of_error(&FetchError::Timeout), Some(Cause::Timeout));
        assert_eq!(Cause::of_error(&FetchError::CoolingDown(3)), None);
        assert_eq!(Cause::Status(503).to_string(), "upstream_status_503");
        assert_eq!(Cause::Dns.to_string(), "dns");
        assert_eq!(
            Cause::InvalidBody(200).to_string(),
            "upstream_status_200_invalid_body"
        );
        assert_eq!(Cause::InvalidBody(200).label(), "invalid_body");
    }
}
