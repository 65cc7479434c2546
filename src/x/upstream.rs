//! The upstream FxTwitter API client (blocking, `ureq`), behind a trait so
//! tests and fuzzers can inject a fake.

/// One upstream HTTP answer, whatever its status.
#[derive(Debug, Clone)]
pub struct UpstreamResponse {
    /// HTTP status code.
    pub status: u16,
    /// The raw `Retry-After` header value, if any.
    pub retry_after: Option<String>,
    /// The `Content-Type` header value, if any.
    pub content_type: Option<String>,
    /// The body bytes (capped by the agent's size limit).
    pub body: Vec<u8>,
}

/// Why an upstream request produced no HTTP answer at all.
#[derive(Debug, Clone)]
pub enum FetchError {
    /// Connecting failed (DNS, refused, TLS).
    Connect(String),
    /// The global request timeout passed.
    Timeout,
    /// The body was larger than the size limit.
    TooLarge,
    /// Anything else the transport reported.
    Other(String),
}

/// A source of FxTwitter v2 answers. `path_and_query` starts with `/2/`.
pub trait Upstream: Send + Sync {
    /// Performs `GET <base><path_and_query>` and returns the answer.
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError>;
}

use std::time::Duration;

/// Largest upstream body read, in bytes. Default 4 MiB; a larger body ends
/// the request with [`FetchError::TooLarge`] and the agent sees an
/// "unexpected response (body too large)" tool error.
pub const MAX_UPSTREAM_BODY_BYTES: u64 = 4 * 1024 * 1024;

/// Default global timeout of one upstream request (connect, send, read the
/// whole body): 10 s. When it passes the agent sees "FxTwitter API did not
/// answer in time. (HTTP 504, code upstream_timeout)".
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);

/// The `User-Agent` sent upstream (FxTwitter refuses requests without one).
pub const USER_AGENT: &str = concat!("xmd/", env!("CARGO_PKG_VERSION"));

/// The real upstream: one shared `ureq` agent (connection reuse) talking to
/// an FxTwitter-compatible base URL.
pub struct HttpUpstream {
    agent: ureq::Agent,
    base_url: String,
}

impl HttpUpstream {
    /// Builds the client for `base_url` (a trailing `/` is dropped) with a
    /// global per-request `timeout`.
    pub fn new(base_url: &str, timeout: Duration) -> HttpUpstream {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(USER_AGENT)
            .max_redirects(0)
            .build();
        HttpUpstream {
            agent: config.new_agent(),
            base_url: base_url.trim_end_matches('/').to_string(),
        }
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }
}

fn map_ureq_error(e: ureq::Error) -> FetchError {
    match e {
        ureq::Error::Timeout(_) => FetchError::Timeout,
        ureq::Error::BodyExceedsLimit(_) => FetchError::TooLarge,
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => {
            FetchError::Connect(e.to_string())
        }
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => FetchError::Timeout,
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::NotConnected
            ) =>
        {
            FetchError::Connect(io.to_string())
        }
        other => FetchError::Other(other.to_string()),
    }
}

impl Upstream for HttpUpstream {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let url = format!("{}{}", self.base_url, path_and_query);
        let mut resp = self
            .agent
            .get(&url)
            .header("Accept", "application/json")
            .call()
            .map_err(map_ureq_error)?;
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let retry_after = header("retry-after");
        let content_type = header("content-type");
        let status = resp.status().as_u16();
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_UPSTREAM_BODY_BYTES)
            .read_to_vec()
            .map_err(map_ureq_error)?;
        Ok(UpstreamResponse {
            status,
            retry_after,
            content_type,
            body,
        })
    }
}
