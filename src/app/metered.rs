//! An [`Upstream`] decorator that counts every upstream request by status
//! and records its latency in the process metrics.

use std::sync::Arc;
use std::time::Instant;

use crate::metrics::{METRICS, UPSTREAM};
use crate::x::upstream::{FetchError, Upstream, UpstreamResponse};

/// Wraps an upstream and meters it.
pub struct Metered(pub Arc<dyn Upstream>);

impl Upstream for Metered {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let started = Instant::now();
        let result = self.0.get(path_and_query);
        let label = match &result {
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
            Err(FetchError::CoolingDown(_))
            | Err(FetchError::BudgetExhausted(_))
            | Err(FetchError::Deadline(_))
            | Err(FetchError::Cancelled) => return result,
        };
        METRICS.upstream(label, started.elapsed());
        result
    }
}
