//! One Streamable HTTP exchange over `ureq`: POST a JSON-RPC message, read
//! the reply as JSON or SSE (by `Content-Type`), find the response with our
//! id. Knows nothing of eras or MCP methods; the caller supplies headers.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::error::{Error, TransportKind, MAX_ERROR_BODY_BYTES};
use crate::client::redirect::{resolve, same_origin, MAX_REDIRECTS};
use crate::client::shape::{check_shape, Tally};

/// Largest `application/json` reply body read: 16 MiB. A bigger body ends
/// the call with a protocol violation ("response body larger than …").
pub const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// `Accept` on every POST: both reply framings (MUST in both eras).
pub const ACCEPT_POST: &str = "application/json, text/event-stream";

/// The `User-Agent` the client sends.
pub const CLIENT_USER_AGENT: &str = concat!("xmd-client/", env!("CARGO_PKG_VERSION"));

/// A callback that sees one line per HTTP exchange (for `--verbose`).
pub type Trace = Arc<dyn Fn(&str) + Send + Sync>;

/// The response to one of our requests.
#[derive(Debug)]
pub(crate) struct Received {
    /// The JSON-RPC response object (has `result` or `error`).
    pub message: Value,
    /// The HTTP status it came with.
    pub status: u16,
    /// `Mcp-Session-Id` on the reply, if any.
    pub session_id: Option<String>,
    /// Body bytes read for it (every SSE stream and resumption included),
    /// and the values and objects of the message that held it.
    pub tally: Tally,
}

/// The HTTP side of a client: agent, endpoint, user headers.
mod resume;

pub use resume::{DEFAULT_SSE_RETRY, MAX_SSE_RESUMES, MAX_SSE_RETRY};

pub(crate) struct Transport {
    agent: ureq::Agent,
    url: String,
    /// Where requests go: `url`, or where a chain of `308`s moved it.
    endpoint: Mutex<String>,
    /// Longest one exchange may take.
    timeout: Duration,
    /// No exchange, wait or resumption goes past it.
    deadline: Option<Instant>,
    headers: Vec<(String, String)>,
    trace: Option<Trace>,
}

/// The HTTP methods the client sends.
#[derive(Clone, Copy)]
enum Verb {
    Post,
    Get,
    Delete,
}

impl Verb {
    fn as_str(self) -> &'static str {
        match self {
            Verb::Post => "POST",
            Verb::Get => "GET",
            Verb::Delete => "DELETE",
        }
    }
}

/// A resumption `GET` starts from the stream's URL, not the endpoint: only
/// requests to the endpoint move it.
fn verb_moves_endpoint(verb: Verb) -> bool {
    !matches!(verb, Verb::Get)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .user_agent(CLIENT_USER_AGENT)
        .max_redirects(0)
        .build()
        .new_agent()
}

/// Maps a `ureq` failure to the client error.
pub(crate) fn map_ureq(e: ureq::Error) -> Error {
    use TransportKind::*;
    let kind = match &e {
        ureq::Error::Timeout(_) => Timeout,
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => Connect,
        ureq::Error::Tls(_) => Tls,
        #[cfg(feature = "tls")]
        ureq::Error::Rustls(_) | ureq::Error::Pem(_) => Tls,
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => Request,
        ureq::Error::BodyExceedsLimit(n) => {
            return Error::protocol(format!("response body larger than {n} bytes"))
        }
        ureq::Error::Io(io) => return map_io(io),
        _ => Io,
    };
    Error::transport(kind, e.to_string())
}

/// Maps an I/O error from reading a body (which may wrap a `ureq::Error`).
pub(crate) fn map_io(e: &std::io::Error) -> Error {
    use std::io::ErrorKind as K;
    if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>()) {
        return map_ureq(match inner {
            ureq::Error::Timeout(t) => ureq::Error::Timeout(*t),
            ureq::Error::BodyExceedsLimit(n) => ureq::Error::BodyExceedsLimit(*n),
            other => return Error::transport(TransportKind::Io, other.to_string()),
        });
    }
    let kind = match e.kind() {
        K::TimedOut | K::WouldBlock => TransportKind::Timeout,
        K::ConnectionRefused
        | K::ConnectionReset
        | K::ConnectionAborted
        | K::NotConnected
        | K::AddrNotAvailable => TransportKind::Connect,
        _ => TransportKind::Io,
    };
    Error::transport(kind, e.to_string())
}

fn header(resp: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
}

/// The media type of a `Content-Type` value, lower-cased, without parameters.
fn media_type(ct: Option<&str>) -> String {
    ct.unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn is_json(mt: &str) -> bool {
    mt == "application/json" || (mt.starts_with("application/") && mt.ends_with("+json"))
}

/// True for a JSON-RPC request object (has `method` and a non-null `id`).
fn is_request(v: &Value) -> bool {
    v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null())
}

/// Whether `v` is the response to request `id`. An error with a null or
/// missing id also counts: the server could not read our id.
fn is_our_response(v: &Value, id: &Value) -> bool {
    if v.get("method").is_some() {
        return false;
    }
    let has_result = v.get("result").is_some();
    // A JSON-RPC error is an object with an integer code; anything else
    // (e.g. `{"error":"not_found"}` from a non-MCP route) is not one.
    let has_error = v
        .get("error")
        .is_some_and(|e| e.get("code").is_some_and(Value::is_i64));
    match v.get("id") {
        Some(got) if got == id => has_result || has_error,
        None | Some(Value::Null) => has_error,
        _ => false,
    }
}

/// Finds our response in one decoded JSON message (object or batch array).
fn find_response(v: Value, id: &Value) -> Option<Value> {
    match v {
        Value::Array(items) => items.into_iter().find(|m| is_our_response(m, id)),
        m if is_our_response(&m, id) => Some(m),
        _ => None,
    }
}

impl Transport {
    pub(crate) fn new(url: &str, timeout: Duration) -> Transport {
        Transport {
            agent: agent(),
            url: url.to_string(),
            endpoint: Mutex::new(url.to_string()),
            timeout,
            deadline: None,
            headers: Vec::new(),
            trace: None,
        }
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    fn endpoint(&self) -> String {
        self.endpoint
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Time the next exchange may take: the per-exchange timeout, cut to
    /// what is left before the deadline; a timeout error once none is.
    fn budget(&self) -> Result<Duration, Error> {
        let Some(deadline) = self.deadline else {
            return Ok(self.timeout);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::transport(
                TransportKind::Timeout,
                "the deadline passed",
            ));
        }
        Ok(left.min(self.timeout))
    }

    pub(crate) fn add_header(&mut self, name: &str, value: &str) {
        self.headers.push((name.to_string(), value.to_string()));
    }

    pub(crate) fn set_trace(&mut self, trace: Option<Trace>) {
        self.trace = trace;
    }

    fn trace(&self, line: impl FnOnce() -> String) {
        if let Some(t) = &self.trace {
            t(&line());
        }
    }

    /// One `--verbose` line from the client above.
    pub(crate) fn trace_line(&self, line: impl FnOnce() -> String) {
        self.trace(line);
    }

    /// Our protocol headers plus the user's; a user header replaces ours of
    /// the same name.
    fn merged<'a>(&'a self, ours: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
        let mut out: Vec<(&str, &str)> = ours
            .iter()
            .filter(|(k, _)| !self.headers.iter().any(|(u, _)| u.eq_ignore_ascii_case(k)))
            .map(|(k, v)| (*k, v.as_str()))
            .collect();
        out.extend(self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        out
    }

    /// Sends one request, following same-origin `307`/`308` redirects
    /// (the same method, headers and body) at most [`MAX_REDIRECTS`]
    /// times; returns the answer and the URL that gave it. A chain of
    /// `308`s only (permanent) moves the endpoint for later requests.
    fn send(
        &self,
        verb: Verb,
        mut url: String,
        ours: &[(&'static str, String)],
        body: Option<&[u8]>,
        what: &str,
    ) -> Result<(ureq::http::Response<ureq::Body>, String), Error> {
        let mut hops = 0u32;
        let mut permanent = true;
        loop {
            let budget = self.budget()?;
            self.trace(|| format!("> {} {url} {what}", verb.as_str()));
            let merged = self.merged(ours);
            macro_rules! build {
                ($req:expr) => {{
                    let mut req = $req;
                    for (k, v) in &merged {
                        req = req.header(*k, *v);
                    }
                    req.config().timeout_global(Some(budget)).build()
                }};
            }
            let resp = match verb {
                Verb::Post => build!(self.agent.post(&url)).send(body.unwrap_or_default()),
                Verb::Get => build!(self.agent.get(&url)).call(),
                Verb::Delete => build!(self.agent.delete(&url)).call(),
            }
            .map_err(map_ureq)?;
            let status = resp.status().as_u16();
            if status != 307 && status != 308 {
                if hops > 0 && permanent && verb_moves_endpoint(verb) {
                    *self.endpoint.lock().unwrap_or_else(|p| p.into_inner()) = url.clone();
                }
                return Ok((resp, url));
            }
            let Some(location) = header(&resp, "location") else {
                return Err(Error::HttpStatus {
                    status,
                    body: "redirect without a Location".into(),
                });
            };
            let Some(next) = resolve(&url, &location) else {
                return Err(Error::HttpStatus {
                    status,
                    body: format!("redirect to an unreadable Location {location:?}"),
                });
            };
            if !same_origin(&url, &next) {
                return Err(Error::HttpStatus {
                    status,
                    body: format!(
                        "redirect from {url} to {next} refused: another origin (xmd client follows 307/308 only within the same scheme, host and port)"
                    ),
                });
            }
            if hops == MAX_REDIRECTS {
                return Err(Error::HttpStatus {
                    status,
                    body: format!(
                        "more than {MAX_REDIRECTS} redirects (the last to {next}); stopped"
                    ),
                });
            }
            hops += 1;
            permanent &= status == 308;
            self.trace(|| format!("< {status} Location: {next} (redirect {hops})"));
            url = next;
        }
    }

    fn send_post(
        &self,
        body: &Value,
        headers: &[(&'static str, String)],
    ) -> Result<(ureq::http::Response<ureq::Body>, String), Error> {
        let mut ours: Vec<(&'static str, String)> = vec![
            ("Content-Type", "application/json".into()),
            ("Accept", ACCEPT_POST.into()),
        ];
        ours.extend(headers.iter().cloned());
        let bytes = serde_json::to_vec(body).map_err(|e| Error::protocol(e.to_string()))?;
        let what = body
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("response");
        let hs: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        self.send(
            Verb::Post,
            self.endpoint(),
            &ours,
            Some(&bytes),
            &format!("{what} [{}]", hs.join(", ")),
        )
    }

    /// Reads a non-success reply body for an [`Error::HttpStatus`].
    fn status_error(&self, status: u16, resp: &mut ureq::http::Response<ureq::Body>) -> Error {
        let location = header(resp, "location");
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_ERROR_BODY_BYTES)
            .lossy_utf8(true)
            .read_to_string()
            .unwrap_or_default();
        let body = match location {
            Some(loc) if matches!(status, 301..=303) => {
                format!("(Location: {loc}; not followed: only 307 and 308 keep the POST) {body}")
            }
            Some(loc) if (300..400).contains(&status) => format!("(Location: {loc}) {body}"),
            _ => body,
        };
        Error::HttpStatus { status, body }
    }

    /// POSTs a request and returns the response carrying `id`. Requests the
    /// server sends on an SSE stream go to `on_request` (which may answer
    /// them); notifications and other events are skipped.
    pub(crate) fn request(
        &self,
        body: &Value,
        headers: &[(&'static str, String)],
        on_request: &mut dyn FnMut(&Value),
    ) -> Result<Received, Error> {
        let id = body.get("id").cloned().unwrap_or(Value::Null);
        let (mut resp, url) = self.send_post(body, headers)?;
        let status = resp.status().as_u16();
        let session_id = header(&resp, "mcp-session-id");
        let ct = header(&resp, "content-type");
        let mt = media_type(ct.as_deref());
        self.trace(|| {
            format!(
                "< {status} {}{}",
                ct.as_deref().unwrap_or("(no Content-Type)"),
                session_id
                    .as_deref()
                    .map(|s| format!(" Mcp-Session-Id: {s}"))
                    .unwrap_or_default()
            )
        });
        if status == 202 {
            return Err(Error::protocol(
                "server answered a request with 202 Accepted and no response",
            ));
        }
        let success = (200..300).contains(&status);
        let mut read = Tally::default();
        let message = if mt == "text/event-stream" && success {
            self.read_sse(resp, &url, &id, headers, on_request, &mut read)?
        } else if is_json(&mt) {
            let bytes = resp
                .body_mut()
                .with_config()
                .limit(MAX_RESPONSE_BYTES)
                .read_to_vec()
                .map_err(map_ureq)?;
            read = check_shape(&bytes)?;
            read.bytes = bytes.len() as u64;
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) => match find_response(v, &id) {
                    Some(m) if success || m.get("error").is_some() => m,
                    _ if !success => {
                        return Err(Error::HttpStatus {
                            status,
                            body: String::from_utf8_lossy(&bytes).into_owned(),
                        })
                    }
                    _ => {
                        return Err(Error::protocol(format!(
                            "JSON reply holds no response with id {id}"
                        )))
                    }
                },
                Err(_) if !success => {
                    return Err(Error::HttpStatus {
                        status,
                        body: String::from_utf8_lossy(&bytes).into_owned(),
                    })
                }
                Err(e) => {
                    return Err(Error::protocol(format!("reply is not valid JSON: {e}")));
                }
            }
        } else if !success {
            return Err(self.status_error(status, &mut resp));
        } else {
            return Err(Error::protocol(format!(
                "unexpected reply Content-Type {:?} (expected application/json or text/event-stream)",
                ct.as_deref().unwrap_or("")
            )));
        };
        Ok(Received {
            message,
            status,
            session_id,
            tally: read,
        })
    }

    /// POSTs a notification or a response (expects 202; any 2xx passes).
    pub(crate) fn notify(
        &self,
        body: &Value,
        headers: &[(&'static str, String)],
    ) -> Result<u16, Error> {
        let (mut resp, _) = self.send_post(body, headers)?;
        let status = resp.status().as_u16();
        self.trace(|| format!("< {status}"));
        if (200..300).contains(&status) {
            Ok(status)
        } else {
            Err(self.status_error(status, &mut resp))
        }
    }

    /// `DELETE` on the endpoint with the given headers; returns the status.
    pub(crate) fn delete(&self, headers: &[(&'static str, String)]) -> Result<u16, Error> {
        let hs: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let (resp, _) = self.send(
            Verb::Delete,
            self.endpoint(),
            headers,
            None,
            &format!("[{}]", hs.join(", ")),
        )?;
        let status = resp.status().as_u16();
        self.trace(|| format!("< {status}"));
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn response_matching() {
        let id = json!(3);
        assert!(is_our_response(
            &json!({"jsonrpc":"2.0","id":3,"result":{}}),
            &id
        ));
        assert!(is_our_response(
            &json!({"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}),
            &id
        ));
        assert!(is_our_response(
            &json!({"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}),
            &id
        ));
        assert!(!is_our_response(
            &json!({"jsonrpc":"2.0","id":null,"result":{}}),
            &id
        ));
        assert!(!is_our_response(&json!({"error":"not_found"}), &id));
        assert!(!is_our_response(
            &json!({"jsonrpc":"2.0","id":3,"error":{"message":"m"}}),
            &id
        ));
        assert!(!is_our_response(
            &json!({"jsonrpc":"2.0","id":"3","result":{}}),
            &id
        ));
        assert!(!is_our_response(
            &json!({"jsonrpc":"2.0","id":4,"result":{}}),
            &id
        ));
        assert!(!is_our_response(
            &json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
            &id
        ));
        assert!(is_request(&json!({"jsonrpc":"2.0","id":3,"method":"ping"})));
        assert!(!is_request(
            &json!({"jsonrpc":"2.0","method":"notifications/progress"})
        ));
        let batch =
            json!([{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":3,"result":2}]);
        assert_eq!(find_response(batch, &id).unwrap()["result"], json!(2));
    }

    #[test]
    fn media_types() {
        assert_eq!(
            media_type(Some("Application/JSON; charset=utf-8")),
            "application/json"
        );
        assert!(is_json("application/json"));
        assert!(is_json("application/problem+json"));
        assert!(!is_json("text/plain"));
        assert_eq!(media_type(None), "");
    }
}
