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
    /// The body bytes (capped by the agent's size limit), shared: the
    /// cache, a coalesced waiter and the parser read one copy.
    pub body: std::sync::Arc<[u8]>,
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
    /// Every upstream base is cooling down after a 429 (or a failure while
    /// another base was available); no request was sent. Whole seconds
    /// until the first base is usable again (at least 1).
    CoolingDown(u64),
    /// xmd's own global upstream budget (`--upstream-budget`) is spent;
    /// no request was sent. Whole seconds until a request may go out again
    /// (at least 1).
    BudgetExhausted(u64),
    /// The tool call's deadline (`--call-timeout`, whole seconds) passed;
    /// no request was sent.
    Deadline(u64),
    /// The client of the tool call has gone; no request was sent.
    Cancelled,
    /// The answer came, but the tool calls' working budget
    /// (`--max-working-bytes`, [`super::memory`]) had no room for the
    /// call to read it in time. Whole seconds to wait before retrying.
    MemoryBudget(u64),
}

/// Narrows the upstream for the calls made for one client: every fetch of
/// a [`super::tools::ToolCall`] whose `client` is set goes through the
/// upstream this returns (for instance, one that spends the client's own
/// share of the upstream budget first).
pub trait PerClient: Send + Sync {
    /// The upstream the calls of `client` use, over `upstream`.
    fn for_client(
        &self,
        client: std::net::IpAddr,
        upstream: &std::sync::Arc<dyn Upstream>,
    ) -> std::sync::Arc<dyn Upstream>;
}

/// A source of FxTwitter v2 answers. `path_and_query` starts with `/2/`.
pub trait Upstream: Send + Sync {
    /// Performs `GET <base><path_and_query>` and returns the answer.
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError>;

    /// Performs `GET <base><path_and_query>` on the second provider of
    /// single posts, X's syndication endpoint (see `syndication`), when one
    /// is configured; `None` otherwise (the default).
    fn get_fallback(&self, _path_and_query: &str) -> Option<Result<UpstreamResponse, FetchError>> {
        None
    }

    /// [`Upstream::get`], and the cache's question whether the answer may
    /// be stored, for the caller to answer once it has read the answer
    /// with the typed parse it needs anyway ([`Keep::answer`]): the cache
    /// ([`super::fetcher::Fetcher`]) then stores it on that word and scans
    /// nothing itself. The parse runs in the caller's own frame, not
    /// under the cache's (worker stacks are small). Without a cache:
    /// [`Upstream::get`], nothing to store.
    fn get_keep<'s>(
        &'s self,
        path_and_query: &'s str,
    ) -> (Result<UpstreamResponse, FetchError>, Keep<'s>) {
        (self.get(path_and_query), Keep::none())
    }
}

/// Whether an answer from [`Upstream::get_keep`] may be stored: answered
/// once by its reader; dropped unanswered, it is not stored.
pub struct Keep<'s>(Option<Box<dyn FnOnce(bool) + 's>>);

impl<'s> Keep<'s> {
    /// A question answered by calling `on_answer` with the word.
    pub fn new(on_answer: impl FnOnce(bool) + 's) -> Keep<'s> {
        Keep(Some(Box::new(on_answer)))
    }

    /// Nobody asks (no cache).
    pub fn none() -> Keep<'s> {
        Keep(None)
    }

    /// Answers: `storable` is the reader's word.
    pub fn answer(mut self, storable: bool) {
        if let Some(f) = self.0.take() {
            f(storable);
        }
    }
}

impl Drop for Keep<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f(false);
        }
    }
}

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::error::DEFAULT_RETRY_AFTER_SECS;
use super::retry_after::{now_unix, parse_retry_after};

/// Longest search query, in characters (code points). Default 500; the
/// `query` argument of `x_md_search_posts` is refused past it (`query`
/// must be 1 to 500 characters). It bounds the upstream URL
/// ([`MAX_UPSTREAM_TARGET_BYTES`]).
pub const MAX_QUERY_CHARS: usize = 500;

/// Longest upstream cursor carried inside an xmd cursor, in bytes.
/// Default 900 (so the whole cursor fits the 1024-character `cursor`
/// argument); a longer one is refused as a forged cursor. It bounds the
/// upstream URL ([`MAX_UPSTREAM_TARGET_BYTES`]).
pub const MAX_UPSTREAM_CURSOR_BYTES: usize = 900;

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

/// Cool-down of a base that answered 5xx or could not be reached, while
/// another base is configured. Default 30 s; during it requests go to the
/// other bases (when every base is cooling, the agent sees
/// "… (HTTP 503, code upstream_rate_limited, retry after <n>s)").
pub const FAILOVER_COOLDOWN: Duration = Duration::from_secs(30);

/// Longest cool-down honoured from a `Retry-After`. Default 1 hour; a
/// longer delay is cut to it.
pub const MAX_COOLDOWN: Duration = Duration::from_secs(3600);

/// Most idle upstream connections kept for reuse (per base and in all).
/// Default 128: two per worker thread at the default 64 workers, since
/// `x_md_get_profile` fetches two pages at once. Past it a finished
/// connection is closed and the next request opens a new one (a TCP
/// handshake more; the agent sees nothing else).
pub const MAX_IDLE_UPSTREAM_CONNECTIONS: usize = 128;

/// Read buffer of one upstream connection, in bytes. Default 16 KiB: the
/// response head must fit in it (a larger head fails the request as an
/// unexpected upstream response); the body streams through it.
pub const UPSTREAM_INPUT_BUFFER_BYTES: usize = 16 * 1024;

/// The longest request-target a tool sends upstream, in bytes: a search
/// for [`MAX_QUERY_CHARS`] characters of 4 UTF-8 bytes each,
/// percent-encoded (12 bytes a character), with an upstream cursor of
/// [`MAX_UPSTREAM_CURSOR_BYTES`] percent-encoded (3 bytes a byte at most),
/// and 256 bytes for the path and the other parameters. 8,956.
pub const MAX_UPSTREAM_TARGET_BYTES: usize =
    12 * MAX_QUERY_CHARS + 3 * MAX_UPSTREAM_CURSOR_BYTES + 256;

/// Write buffer of one upstream connection, in bytes. Default 16 KiB: the
/// request head must fit in it, and it holds the longest target
/// ([`MAX_UPSTREAM_TARGET_BYTES`]) with 2 KiB to spare for the request line
/// and the header fields (checked when compiling). A head that did not fit
/// would fail the call as a network error: a 500-character search in CJK
/// or emoji did, at 4 KiB.
pub const UPSTREAM_OUTPUT_BUFFER_BYTES: usize = 16 * 1024;

const _: () = assert!(UPSTREAM_OUTPUT_BUFFER_BYTES >= MAX_UPSTREAM_TARGET_BYTES + 2048);

/// Most upstream base URLs in one pool. Default 16; more are refused by
/// [`HttpUpstream::from_list`].
pub const MAX_UPSTREAM_BASES: usize = 16;

struct Base {
    url: String,
    cool_until: Mutex<Option<Instant>>,
}

impl Base {
    /// Time left in this base's cool-down, if any.
    fn cooling_left(&self, now: Instant) -> Option<Duration> {
        let mut g = self.cool_until.lock().unwrap_or_else(|p| p.into_inner());
        match *g {
            Some(t) if t > now => Some(t - now),
            Some(_) => {
                *g = None;
                None
            }
            None => None,
        }
    }

    fn cool(&self, d: Duration) {
        let until = Instant::now() + d.min(MAX_COOLDOWN);
        let mut g = self.cool_until.lock().unwrap_or_else(|p| p.into_inner());
        *g = Some(g.map_or(until, |t| t.max(until)));
    }
}

/// The real upstream: one shared `ureq` agent (connection reuse) talking to
/// a pool of FxTwitter-compatible base URLs, used in turn. A base that
/// answers 429 cools for its `Retry-After` (default
/// [`DEFAULT_RETRY_AFTER_SECS`]); with several bases, one that answers 5xx
/// or cannot be reached cools for [`FAILOVER_COOLDOWN`] and the request
/// moves on to the next base. While every base cools, requests fail with
/// [`FetchError::CoolingDown`] without touching the network.
pub struct HttpUpstream {
    agent: ureq::Agent,
    bases: Vec<Base>,
    next: AtomicUsize,
}

impl HttpUpstream {
    /// Builds the client for `base_url` with a global per-request
    /// `timeout`. `base_url` may be a comma-separated list (see
    /// [`HttpUpstream::from_list`]); blank entries are skipped and a
    /// trailing `/` is dropped.
    pub fn new(base_url: &str, timeout: Duration) -> HttpUpstream {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(USER_AGENT)
            .max_redirects(0)
            .max_idle_connections(MAX_IDLE_UPSTREAM_CONNECTIONS)
            .max_idle_connections_per_host(MAX_IDLE_UPSTREAM_CONNECTIONS)
            .input_buffer_size(UPSTREAM_INPUT_BUFFER_BYTES)
            .output_buffer_size(UPSTREAM_OUTPUT_BUFFER_BYTES)
            .build();
        let mut bases: Vec<Base> = split_bases(base_url)
            .into_iter()
            .map(|url| Base {
                url,
                cool_until: Mutex::new(None),
            })
            .collect();
        if bases.is_empty() {
            bases.push(Base {
                url: base_url.trim().trim_end_matches('/').to_string(),
                cool_until: Mutex::new(None),
            });
        }
        HttpUpstream {
            agent: ureq::Agent::with_parts(
                config,
                ureq::unversioned::transport::DefaultConnector::new(),
                super::resolve::CachingResolver::new(),
            ),
            bases,
            next: AtomicUsize::new(0),
        }
    }

    /// Builds a pool from a comma-separated list of `http://` or
    /// `https://` base URLs (for `--upstream a,b`), refusing an empty list,
    /// a non-HTTP entry or more than [`MAX_UPSTREAM_BASES`] entries.
    pub fn from_list(list: &str, timeout: Duration) -> Result<HttpUpstream, String> {
        let bases = split_bases(list);
        if bases.is_empty() {
            return Err("no upstream base URL given".into());
        }
        if bases.len() > MAX_UPSTREAM_BASES {
            return Err(format!(
                "at most {MAX_UPSTREAM_BASES} upstream base URLs are supported"
            ));
        }
        if let Some(bad) = bases.iter().find(|b| {
            let rest = b
                .strip_prefix("http://")
                .or_else(|| b.strip_prefix("https://"));
            rest.is_none_or(|r| r.is_empty() || r.starts_with('/'))
        }) {
            return Err(format!(
                "invalid upstream base URL '{bad}' (expected http:// or https://)"
            ));
        }
        Ok(HttpUpstream::new(list, timeout))
    }

    /// The first base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.bases[0].url
    }

    /// Every base URL, in rotation order.
    pub fn base_urls(&self) -> Vec<&str> {
        self.bases.iter().map(|b| b.url.as_str()).collect()
    }

    fn get_from(&self, base: &str, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let url = format!("{base}{path_and_query}");
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
        // Sized once from `Content-Length` (when sent, up to the cap), not
        // grown by doubling from empty with small probe reads; one byte
        // more, so that the read that finds the end needs no probe buffer
        // of its own (`read_to_end` probes when a buffer is exactly full).
        // The body counts for the tool call reading it before it is read
        // (x::memory); with no room in time it is not read.
        if !super::memory::incoming(resp.body().content_length(), MAX_UPSTREAM_BODY_BYTES) {
            return Err(FetchError::MemoryBudget(
                super::memory::WORK_RETRY_AFTER_SECS,
            ));
        }
        let announced = resp.body().content_length().unwrap_or(0);
        let mut body = Vec::with_capacity(announced.min(MAX_UPSTREAM_BODY_BYTES) as usize + 1);
        resp.body_mut()
            .with_config()
            .limit(MAX_UPSTREAM_BODY_BYTES)
            .reader()
            .read_to_end(&mut body)
            .map_err(|e| map_ureq_error(ureq::Error::from(e)))?;
        Ok(UpstreamResponse {
            status,
            retry_after,
            content_type,
            body: body.into(),
        })
    }
}

fn split_bases(list: &str) -> Vec<String> {
    list.split(',')
        .map(|b| b.trim().trim_end_matches('/').to_string())
        .filter(|b| !b.is_empty())
        .collect()
}

/// The cool-down a 429 answer asks for: its `Retry-After` in any form
/// ([`parse_retry_after`]: seconds, or an HTTP-date as IMF-fixdate, RFC 850
/// or asctime, counted from now), else [`DEFAULT_RETRY_AFTER_SECS`]; at
/// most [`MAX_COOLDOWN`].
fn retry_after_of(resp: &UpstreamResponse) -> Duration {
    let now = now_unix();
    let secs = resp
        .retry_after
        .as_deref()
        .and_then(|v| parse_retry_after(v, now))
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_RETRY_AFTER_SECS);
    Duration::from_secs(secs.min(MAX_COOLDOWN.as_secs()))
}

/// Whole seconds of `d`, rounded up, at least 1.
fn ceil_secs(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
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
        let n = self.bases.len();
        let first = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let mut last = None;
        let mut soonest: Option<Duration> = None;
        for i in 0..n {
            let base = &self.bases[(first + i) % n];
            if let Some(left) = base.cooling_left(Instant::now()) {
                soonest = Some(soonest.map_or(left, |s| s.min(left)));
                continue;
            }
            let r = self.get_from(&base.url, path_and_query);
            let cool = match &r {
                Ok(resp) if resp.status == 429 => retry_after_of(resp),
                Ok(resp) if resp.status >= 500 && n > 1 => FAILOVER_COOLDOWN,
                Err(FetchError::Connect(_) | FetchError::Timeout) if n > 1 => FAILOVER_COOLDOWN,
                _ => return r,
            };
            base.cool(cool);
            last = Some(r);
        }
        match (last, soonest) {
            (Some(r), _) => r,
            (None, Some(left)) => Err(FetchError::CoolingDown(ceil_secs(left))),
            (None, None) => Err(FetchError::Other("no upstream base configured".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Arc;

    /// A loopback upstream that answers one request with `head` (status
    /// line and headers, without the blank line) and `body`, then closes.
    fn answer_once(head: String, body: Vec<u8>) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let _ = s.write_all(format!("{head}\r\nConnection: close\r\n\r\n").as_bytes());
            let _ = s.write_all(&body);
        });
        format!("http://{addr}")
    }

    /// A keep-alive loopback upstream answering every request `{}`; the
    /// returned counter counts the connections it accepted.
    fn keep_alive_upstream() -> (String, Arc<AtomicUsize>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { return };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let mut got = Vec::new();
                    loop {
                        while let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                            got.drain(..end + 4);
                            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
                            if s.write_all(reply).is_err() {
                                return;
                            }
                        }
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => got.extend_from_slice(&buf[..n]),
                        }
                    }
                });
            }
        });
        (format!("http://{addr}"), accepted)
    }

    /// Finished requests leave their connection in the pool for the next
    /// one: 4 threads of 6 requests each open at most 4 connections, one
    /// per request in flight (24 without reuse).
    #[test]
    fn requests_reuse_pooled_connections() {
        let (base, accepted) = keep_alive_upstream();
        let up = Arc::new(HttpUpstream::new(&base, Duration::from_secs(5)));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let up = Arc::clone(&up);
                std::thread::spawn(move || {
                    for _ in 0..6 {
                        let r = up.get("/2/status/1").unwrap();
                        assert_eq!((r.status, &r.body[..]), (200, &b"{}"[..]));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let n = accepted.load(Ordering::SeqCst);
        assert!((1..=4).contains(&n), "{n} connections for 24 requests");
    }

    /// The body is read whole however it is framed (a length, chunks, or
    /// the end of the connection), and one byte over the cap is
    /// `TooLarge` in every framing, also when the length announced is far
    /// over the cap.
    #[test]
    fn bodies_in_every_framing_and_the_cap() {
        let body: Vec<u8> = (0..70_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let chunked = {
            let mut c = Vec::new();
            for part in body.chunks(9_000) {
                c.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
                c.extend_from_slice(part);
                c.extend_from_slice(b"\r\n");
            }
            c.extend_from_slice(b"0\r\n\r\n");
            c
        };
        let ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json";
        let framings = [
            (
                format!("{ok}\r\nContent-Length: {}", body.len()),
                body.clone(),
            ),
            (format!("{ok}\r\nTransfer-Encoding: chunked"), chunked),
            (ok.to_string(), body.clone()),
        ];
        for (head, sent) in framings {
            let up = HttpUpstream::new(&answer_once(head.clone(), sent), Duration::from_secs(5));
            let r = up.get("/2/status/1").unwrap();
            assert_eq!((r.status, &r.body[..]), (200, &body[..]), "{head}");
        }
        let over = vec![b'x'; MAX_UPSTREAM_BODY_BYTES as usize + 1];
        for length in [Some(over.len() as u64), Some(1 << 40), None] {
            let head = match length {
                Some(n) => format!("{ok}\r\nContent-Length: {n}"),
                None => ok.to_string(),
            };
            let up = HttpUpstream::new(&answer_once(head, over.clone()), Duration::from_secs(5));
            let e = up.get("/2/status/1").unwrap_err();
            assert!(matches!(e, FetchError::TooLarge), "{length:?}: {e:?}");
        }
    }

    #[test]
    fn lists_and_seconds() {
        let u = HttpUpstream::new("http://a/, http://b ,", Duration::from_secs(1));
        assert_eq!(u.base_urls(), ["http://a", "http://b"]);
        assert_eq!(u.base_url(), "http://a");
        assert!(HttpUpstream::from_list(" , ", Duration::from_secs(1)).is_err());
        assert!(HttpUpstream::from_list("http://a,ftp://b", Duration::from_secs(1)).is_err());
        assert!(HttpUpstream::from_list("http://a,https://b", Duration::from_secs(1)).is_ok());
        assert_eq!(ceil_secs(Duration::from_millis(29_001)), 30);
        assert_eq!(ceil_secs(Duration::from_secs(30)), 30);
        assert_eq!(ceil_secs(Duration::from_millis(1)), 1);
    }
}
