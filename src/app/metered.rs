//! An [`Upstream`] decorator that counts every upstream request by status
//! and records its latency in the process metrics.

use std::sync::Arc;
use std::time::Instant;

use crate::metrics::{METRICS, UPSTREAM};
use crate::x::upstream::{FetchError, Upstream, UpstreamResponse};

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
        // Answered locally during a cool-down: no upstream request was made.
        Err(FetchError::CoolingDown(_)) | Err(FetchError::BudgetExhausted(_)) => return None,
    })
}

impl Upstream for Metered {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let started = Instant::now();
        let result = self.0.get(path_and_query);
        if let Some(label) = label(&result) {
            METRICS.upstream(label, started.elapsed());
        }
        result
    }
}

/// Wraps the post fallback (X's syndication endpoint) and counts its
/// requests by status in their own series,
/// `xmd_syndication_requests_total`.
pub struct MeteredFallback(pub Arc<dyn Upstream>);

impl Upstream for MeteredFallback {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let result = self.0.get(path_and_query);
        if let Some(label) = label(&result) {
            METRICS.syndication(label);
        }
        result
    }
}
