//! The bytes of one upstream exchange, without I/O: the `GET` request
//! written by `ureq-proto`'s client state machine, and the response read
//! back by it ([`ResponseReader`]) into an [`UpstreamResponse`] with the
//! body cap. The fuzz target `upstream_reader` drives the reader.

use ureq_proto::client::{Call, RecvBodyResult, RecvResponseResult, SendRequestResult};
use ureq_proto::http;
use ureq_proto::BodyMode;

use super::body::BodyBuf;
use crate::x::upstream::{UpstreamResponse, UPSTREAM_OUTPUT_BUFFER_BYTES, USER_AGENT};

/// Bytes of body read per step into the body buffer (it grows by this
/// much at most, up to the cap).
const BODY_STEP_BYTES: usize = 16 * 1024;

/// Most bytes of an upstream answer's heads (status line and header
/// section): 64 KiB, ureq's own `max_response_header_size`, so both
/// upstream clients refuse the same heads. Any interim (1xx) heads before
/// the final one count in the same 64 KiB, with it. Past it the request
/// fails as a bad response (the agent sees `fxtwitter_network`), once the
/// cap is reached, not when the head ends: a head that never ends (60 MB
/// of status line) held a request past its deadline and its bytes in
/// memory, and an endless run of `100 Continue` (or `103` with headers)
/// kept a request reading until its timeout (ureq, which caps each head
/// alone, still does: `--upstream-io threads` fails it at
/// `--upstream-timeout`).
pub const MAX_UPSTREAM_HEAD_BYTES: usize = 64 * 1024;

/// Most bytes of a chunked body's framing kept while its line has not
/// ended (a chunk-size line with its extensions, the CRLF after a chunk's
/// data, a trailer field line), and most bytes of its trailer section
/// (RFC 9112 §7.1, §7.1.2): [`MAX_UPSTREAM_HEAD_BYTES`], as a header
/// section. Past either the request fails as a bad response (the agent
/// sees `fxtwitter_network`) once the cap is passed. A chunk-size line
/// that never ended (`1;` and 60 MB of extension) had the loop keep it
/// whole and search it again for its CRLF on every piece: the call went
/// unanswered past its deadline and the loop's other connections waited.
/// The trailer section is counted from the read after the one that read
/// the last chunk (`0`): it is refused at most one read's bytes late.
pub const MAX_UPSTREAM_FRAMING_BYTES: usize = MAX_UPSTREAM_HEAD_BYTES;

/// Why a response could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The body is (or announces) more than the cap.
    TooLarge,
    /// Bytes that are not an HTTP/1.1 response (ureq-proto's words).
    Protocol(String),
    /// The connection ended before the response did.
    Incomplete,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::TooLarge => f.write_str("body too large"),
            WireError::Protocol(m) => write!(f, "bad upstream response: {m}"),
            WireError::Incomplete => f.write_str("connection closed before the response ended"),
        }
    }
}

/// A response read whole.
#[derive(Debug)]
pub struct Reply {
    /// The answer.
    pub response: UpstreamResponse,
    /// Whether the connection may carry another request.
    pub reusable: bool,
}

/// The request of `GET <uri>` as bytes (request line and headers), with
/// `Accept: application/json` and xmd's `User-Agent`, and the reader of
/// its response. `uri` is absolute (`http://host:port/path?query`).
///
/// # Errors
/// When `uri` is not a URI `http` accepts, or the head does not fit
/// [`UPSTREAM_OUTPUT_BUFFER_BYTES`].
pub fn get(uri: &str, cap: usize) -> Result<(Vec<u8>, ResponseReader), WireError> {
    let request = http::Request::get(uri)
        .header("accept", "application/json")
        .header("user-agent", USER_AGENT)
        .body(())
        .map_err(|e| WireError::Protocol(e.to_string()))?;
    let call = Call::new(request).map_err(|e| WireError::Protocol(e.to_string()))?;
    let mut call = call.proceed();
    // The target and 512 bytes for the request line's words and the
    // three headers; the head may never exceed the output buffer.
    let mut out = vec![0u8; (uri.len() + 512).min(UPSTREAM_OUTPUT_BUFFER_BYTES)];
    let mut used = 0;
    while !call.can_proceed() {
        let n = match call.write(&mut out[used..]) {
            Ok(n) => n,
            Err(ureq_proto::Error::OutputOverflow) if out.len() < UPSTREAM_OUTPUT_BUFFER_BYTES => {
                out.resize(UPSTREAM_OUTPUT_BUFFER_BYTES, 0);
                continue;
            }
            Err(e) => return Err(WireError::Protocol(e.to_string())),
        };
        if n == 0 {
            if out.len() < UPSTREAM_OUTPUT_BUFFER_BYTES {
                out.resize(UPSTREAM_OUTPUT_BUFFER_BYTES, 0);
                continue;
            }
            return Err(WireError::Protocol("request head too large".into()));
        }
        used += n;
    }
    out.truncate(used);
    let recv = match call.proceed() {
        Ok(Some(SendRequestResult::RecvResponse(c))) => c,
        Ok(_) => return Err(WireError::Protocol("a GET with a body".into())),
        Err(e) => return Err(WireError::Protocol(e.to_string())),
    };
    Ok((out, ResponseReader::new(recv, cap)))
}

/// The error for heads past [`MAX_UPSTREAM_HEAD_BYTES`].
fn head_over() -> WireError {
    WireError::Protocol(format!(
        "response head over {MAX_UPSTREAM_HEAD_BYTES} bytes"
    ))
}

/// The error for chunked framing past [`MAX_UPSTREAM_FRAMING_BYTES`].
fn framing_over() -> WireError {
    WireError::Protocol(format!(
        "chunked framing line or trailer section over {MAX_UPSTREAM_FRAMING_BYTES} bytes"
    ))
}

enum State {
    Head(Call<ureq_proto::client::state::RecvResponse>),
    Body(Call<ureq_proto::client::state::RecvBody>),
    Done(bool),
    Failed,
}

/// Reads one response: [`ResponseReader::feed`] with the bytes as they
/// come, [`ResponseReader::eof`] when the peer closes.
pub struct ResponseReader {
    state: State,
    cap: usize,
    status: u16,
    retry_after: Option<String>,
    content_type: Option<String>,
    /// The body read so far: `filled` bytes of it (the rest is zeroed
    /// room).
    body: BodyBuf,
    filled: usize,
    /// Any byte of the response was received.
    started: bool,
    /// The body waits, unread, for [`ResponseReader::admit`] once the head
    /// is in ([`ResponseReader::gate`]).
    gated: bool,
    admitted: bool,
    /// The body's `Content-Length`, once the head is in.
    length: Option<u64>,
    /// Bytes of a chunked body's trailer section read so far.
    trailer: usize,
    /// Bytes of interim (1xx) heads read so far.
    interim: usize,
}

impl ResponseReader {
    fn new(call: Call<ureq_proto::client::state::RecvResponse>, cap: usize) -> ResponseReader {
        ResponseReader {
            state: State::Head(call),
            cap,
            status: 0,
            retry_after: None,
            content_type: None,
            body: BodyBuf::default(),
            filled: 0,
            started: false,
            gated: false,
            admitted: false,
            length: None,
            trailer: 0,
            interim: 0,
        }
    }

    /// Makes the body wait, unread, once the head is in, until
    /// [`ResponseReader::admit`] (the server counts a body in its working
    /// budget before reading it, `crate::x::memory`).
    pub fn gate(&mut self) {
        self.gated = true;
    }

    /// With the head in and the body waiting for [`ResponseReader::admit`]:
    /// the body's announced length (`None`: not announced).
    pub fn needs_room(&self) -> Option<Option<u64>> {
        (self.gated && !self.admitted && matches!(self.state, State::Body(_)))
            .then_some(self.length)
    }

    /// Whether the reader is gated and its body not admitted yet (its head
    /// may not be in): the connection is read a piece at a time, so that
    /// no more than a piece past the head is read before the body has
    /// room.
    pub fn cautious(&self) -> bool {
        self.gated && !self.admitted
    }

    /// Lets the body be read (room for it is counted).
    pub fn admit(&mut self) {
        if self.admitted {
            return;
        }
        self.admitted = true;
        if let Some(n) = self.length {
            // Zeroed once, read into in place, handed on as it is.
            self.body = BodyBuf::exact(usize::try_from(n).unwrap_or(usize::MAX));
        }
    }

    /// A reader for the response to a `GET` of `http://upstream/` (for
    /// tests and the fuzz target).
    pub fn for_get(cap: usize) -> ResponseReader {
        get("http://upstream/", cap)
            .expect("a fixed request fits")
            .1
    }

    /// Whether any byte of the response was received (a kept-alive
    /// connection that failed before that may be retried, RFC 9112
    /// §9.3.1).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Whether the response is read whole ([`ResponseReader::finish`]
    /// gives it).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done(_))
    }

    /// Reads what it can of `input`; returns the bytes it used (the rest
    /// belongs to no response: an upstream sends nothing unasked).
    ///
    /// # Errors
    /// A body over the cap, or bytes that are not a response.
    pub fn feed(&mut self, input: &[u8]) -> Result<usize, WireError> {
        if !input.is_empty() {
            self.started = true;
        }
        let mut pos = 0;
        loop {
            match std::mem::replace(&mut self.state, State::Failed) {
                State::Head(mut call) => {
                    let (used, response) = call
                        .try_response(&input[pos..], false)
                        .map_err(|e| WireError::Protocol(e.to_string()))?;
                    pos += used;
                    let Some(response) = response else {
                        self.state = State::Head(call);
                        // A 1xx was consumed (counted with the heads to
                        // come): look for the real head.
                        self.interim += used;
                        if self.interim > MAX_UPSTREAM_HEAD_BYTES {
                            return Err(head_over());
                        }
                        if used > 0 && pos < input.len() {
                            continue;
                        }
                        // What is left is a head whose end has not come.
                        if self.interim + (input.len() - pos) > MAX_UPSTREAM_HEAD_BYTES {
                            return Err(head_over());
                        }
                        return Ok(pos);
                    };
                    if self.interim + used > MAX_UPSTREAM_HEAD_BYTES {
                        return Err(head_over());
                    }
                    self.head(&response)?;
                    self.state = match call.proceed() {
                        Some(RecvResponseResult::RecvBody(body)) => {
                            if let BodyMode::LengthDelimited(n) = body.body_mode() {
                                if n > self.cap as u64 {
                                    return Err(WireError::TooLarge);
                                }
                                self.length = Some(n);
                                if !self.gated {
                                    self.admit();
                                }
                            } else if !self.gated {
                                self.admitted = true;
                            }
                            State::Body(body)
                        }
                        Some(RecvResponseResult::Redirect(r)) => {
                            State::Done(!r.must_close_connection())
                        }
                        Some(RecvResponseResult::Cleanup(c)) => {
                            State::Done(!c.must_close_connection())
                        }
                        None => return Err(WireError::Protocol("no response".into())),
                    };
                }
                State::Body(mut call) => {
                    if self.gated && !self.admitted {
                        // Waiting for room: the rest stays unread.
                        self.state = State::Body(call);
                        return Ok(pos);
                    }
                    let close_delimited = matches!(call.body_mode(), BodyMode::CloseDelimited);
                    let limit = self.cap + 1;
                    while pos < input.len() && (close_delimited || !call.can_proceed()) {
                        if self.filled >= limit {
                            return Err(WireError::TooLarge);
                        }
                        // Zeroed room, grown by doubling (a length-announced
                        // body got its exact room with its head).
                        if self.filled == self.body.len() {
                            let grown = (self.filled + BODY_STEP_BYTES)
                                .max(self.body.len() * 2)
                                .min(limit);
                            self.body.grow_to(grown);
                        }
                        let end = self.body.len().min(limit);
                        let in_trailer = call.is_ended_chunked();
                        let (used, wrote) = call
                            .read(&input[pos..], self.body.room(self.filled, end))
                            .map_err(|e| WireError::Protocol(e.to_string()))?;
                        pos += used;
                        self.filled += wrote;
                        if in_trailer {
                            self.trailer += used;
                            if self.trailer > MAX_UPSTREAM_FRAMING_BYTES {
                                return Err(framing_over());
                            }
                        }
                        if self.filled > self.cap {
                            return Err(WireError::TooLarge);
                        }
                        if used == 0 && wrote == 0 {
                            break;
                        }
                    }
                    if !close_delimited && call.can_proceed() {
                        self.state = match call.proceed() {
                            Some(RecvBodyResult::Cleanup(c)) => {
                                State::Done(!c.must_close_connection())
                            }
                            Some(RecvBodyResult::Redirect(r)) => {
                                State::Done(!r.must_close_connection())
                            }
                            None => return Err(WireError::Protocol("body not ended".into())),
                        };
                        return Ok(pos);
                    }
                    // Still in the body: what is left is a framing line
                    // whose end has not come.
                    if input.len() - pos > MAX_UPSTREAM_FRAMING_BYTES {
                        return Err(framing_over());
                    }
                    self.state = State::Body(call);
                    return Ok(pos);
                }
                done @ State::Done(_) => {
                    self.state = done;
                    return Ok(pos);
                }
                State::Failed => return Err(WireError::Protocol("read after a failure".into())),
            }
        }
    }

    /// The peer closed the connection: the response if it is complete (a
    /// body delimited by the close, or a chunked body missing only its
    /// last CRLF); the connection is not reusable.
    ///
    /// # Errors
    /// [`WireError::Incomplete`] when the response is not whole.
    pub fn eof(&mut self) -> Result<(), WireError> {
        match std::mem::replace(&mut self.state, State::Failed) {
            State::Body(call)
                if matches!(call.body_mode(), BodyMode::CloseDelimited)
                    || call.is_ended_chunked() =>
            {
                self.state = State::Done(false);
                Ok(())
            }
            State::Done(_) => {
                self.state = State::Done(false);
                Ok(())
            }
            _ => Err(WireError::Incomplete),
        }
    }

    /// The response read whole, once [`ResponseReader::is_done`].
    pub fn finish(self) -> Option<Reply> {
        let State::Done(reusable) = self.state else {
            return None;
        };
        Some(Reply {
            response: UpstreamResponse {
                status: self.status,
                retry_after: self.retry_after,
                content_type: self.content_type,
                body: self.body.into_shared(self.filled),
            },
            reusable,
        })
    }

    fn head(&mut self, response: &http::Response<()>) -> Result<(), WireError> {
        self.status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        self.retry_after = header("retry-after");
        self.content_type = header("content-type");
        Ok(())
    }
}

#[cfg(test)]
mod tests;
