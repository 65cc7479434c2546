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
