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

/// TEMPORARY (replaced by the x-module branch): the real upstream over ureq.
pub struct HttpUpstream {
    agent: ureq::Agent,
    base: String,
}

impl HttpUpstream {
    /// An upstream at `base_url` with a global request timeout.
    pub fn new(base_url: &str, timeout: std::time::Duration) -> HttpUpstream {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        HttpUpstream { agent, base: base_url.trim_end_matches('/').to_string() }
    }
}

impl Upstream for HttpUpstream {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let url = format!("{}{}", self.base, path_and_query);
        let mut res = self
            .agent
            .get(&url)
            .header("User-Agent", concat!("xmd/", env!("CARGO_PKG_VERSION")))
            .call()
            .map_err(|e| FetchError::Other(e.to_string()))?;
        let status = res.status().as_u16();
        let header = |n: &str| res.headers().get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
        let retry_after = header("retry-after");
        let content_type = header("content-type");
        let body = res
            .body_mut()
            .with_config()
            .limit(4 * 1024 * 1024)
            .read_to_vec()
            .map_err(|e| FetchError::Other(e.to_string()))?;
        Ok(UpstreamResponse { status, retry_after, content_type, body })
    }
}
