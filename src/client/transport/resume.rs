//! Reading an SSE reply to the end: the POST's stream, then, each time a
//! stream that announced an event `id` closes before our response, a `GET`
//! with `Last-Event-ID` after the stream's `retry` wait (MCP 2025-11-25,
//! "Resumability and Redelivery", SEP-1699), every wait and stream within
//! the transport's deadline.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{header, is_our_response, is_request, map_io, media_type, Transport, Verb};
use crate::client::error::{Error, TransportKind};
use crate::client::shape::{check_shape, Tally};
use crate::client::sse::{SseDecoder, SseError};

/// Read buffer for SSE streams, in bytes.
const SSE_READ_CHUNK: usize = 16 * 1024;

/// Most times one request's SSE stream is resumed (MCP 2025-11-25,
/// "Resumability and Redelivery", SEP-1699): when a stream that carried an
/// event `id` closes before our response, the client reconnects with `GET`
/// and `Last-Event-ID`. Default 5; past it the call fails with a protocol
/// violation ("SSE stream ended ... after 5 resumptions").
pub const MAX_SSE_RESUMES: u32 = 5;

/// Wait before a resumption when the stream sent no `retry` field: 500 ms.
pub const DEFAULT_SSE_RETRY: Duration = Duration::from_millis(500);

/// Longest wait a server's `retry` field can ask for before a resumption:
/// 10 s (a larger value is cut to it, so a call stays bounded in time).
pub const MAX_SSE_RETRY: Duration = Duration::from_secs(10);

impl Transport {
    /// Sleeps `wait`, or until the deadline (then a timeout error).
    fn sleep(&self, wait: Duration) -> Result<(), Error> {
        let Some(deadline) = self.deadline else {
            std::thread::sleep(wait);
            return Ok(());
        };
        let left = deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(wait.min(left));
        if wait >= left {
            return Err(Error::transport(
                TransportKind::Timeout,
                "the deadline passed while waiting to resume the SSE stream",
            ));
        }
        Ok(())
    }

    /// Reads SSE streams until the response with `id`: the POST's reply,
    /// then, each time a stream that announced an event id closes first,
    /// a `GET` with `Last-Event-ID` after the announced `retry` wait, at
    /// most [`MAX_SSE_RESUMES`] times.
    pub(super) fn read_sse(
        &self,
        mut resp: ureq::http::Response<ureq::Body>,
        url: &str,
        id: &Value,
        headers: &[(&'static str, String)],
        on_request: &mut dyn FnMut(&Value),
        read: &mut Tally,
    ) -> Result<Value, Error> {
        let mut last_id: Option<String> = None;
        let mut retry: Option<u64> = None;
        let mut resumes = 0u32;
        loop {
            let mut decoder = SseDecoder::new();
            let ended = self.read_stream(&mut resp, &mut decoder, id, on_request, read)?;
            if let Some(found) = ended {
                return Ok(found);
            }
            last_id = decoder.last_event_id().map(str::to_string).or(last_id);
            retry = decoder.retry_ms().or(retry);
            let Some(event_id) = last_id.clone() else {
                return Err(Error::protocol(format!(
                    "SSE stream ended before the response to request {id}"
                )));
            };
            if resumes == MAX_SSE_RESUMES {
                return Err(Error::protocol(format!(
                    "SSE stream ended before the response to request {id} after {MAX_SSE_RESUMES} resumptions"
                )));
            }
            resumes += 1;
            let wait = retry.map_or(DEFAULT_SSE_RETRY, Duration::from_millis);
            self.sleep(wait.min(MAX_SSE_RETRY))?;
            resp = self.resume(url, &event_id, headers)?;
        }
    }

    /// `GET` with `Last-Event-ID` on the URL that gave the stream: the
    /// resumed stream.
    fn resume(
        &self,
        url: &str,
        event_id: &str,
        headers: &[(&'static str, String)],
    ) -> Result<ureq::http::Response<ureq::Body>, Error> {
        let mut ours: Vec<(&'static str, String)> = vec![
            ("Accept", "text/event-stream".into()),
            ("Last-Event-ID", event_id.to_string()),
        ];
        ours.extend(headers.iter().cloned());
        let (mut resp, _) = self.send(
            Verb::Get,
            url.to_string(),
            &ours,
            None,
            &format!("[Last-Event-ID: {event_id}]"),
        )?;
        let status = resp.status().as_u16();
        let ct = header(&resp, "content-type");
        self.trace(|| {
            format!(
                "< {status} {}",
                ct.as_deref().unwrap_or("(no Content-Type)")
            )
        });
        if !(200..300).contains(&status) {
            return Err(self.status_error(status, &mut resp));
        }
        if media_type(ct.as_deref()) != "text/event-stream" {
            return Err(Error::protocol(format!(
                "resumed stream has Content-Type {:?} (expected text/event-stream)",
                ct.as_deref().unwrap_or("")
            )));
        }
        Ok(resp)
    }

    /// Reads one SSE stream: `Some(response)` once it carries ours, `None`
    /// when the stream ends (or breaks) first.
    fn read_stream(
        &self,
        resp: &mut ureq::http::Response<ureq::Body>,
        decoder: &mut SseDecoder,
        id: &Value,
        on_request: &mut dyn FnMut(&Value),
        read: &mut Tally,
    ) -> Result<Option<Value>, Error> {
        let mut reader = resp.body_mut().as_reader();
        let mut buf = vec![0u8; SSE_READ_CHUNK];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(None),
                Ok(n) => {
                    read.bytes += n as u64;
                    n
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let err = map_io(&e);
                    // A stream cut mid-way (not a timeout) may be resumed.
                    return match err {
                        Error::Transport {
                            kind: TransportKind::Timeout,
                            ..
                        } => Err(err),
                        _ if decoder.last_event_id().is_some() => Ok(None),
                        _ => Err(err),
                    };
                }
            };
            let events = decoder.feed(&buf[..n]).map_err(|e| match e {
                SseError::EventTooLarge(_) => Error::protocol(e.to_string()),
            })?;
            for ev in events {
                if ev.event != "message" {
                    self.trace(|| format!("< SSE event '{}' skipped", ev.event));
                    continue;
                }
                let shape = check_shape(ev.data.as_bytes())?;
                let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
                    Error::protocol(format!("SSE message event is not valid JSON: {e}"))
                })?;
                let items = match v {
                    Value::Array(items) => items,
                    one => vec![one],
                };
                for m in items {
                    if is_our_response(&m, id) {
                        read.values = shape.values;
                        read.objects = shape.objects;
                        return Ok(Some(m));
                    }
                    if is_request(&m) {
                        on_request(&m);
                    } else {
                        self.trace(|| {
                            let what = m.get("method").and_then(Value::as_str).unwrap_or("?");
                            format!("< SSE message '{what}' skipped")
                        });
                    }
                }
            }
        }
    }
}
