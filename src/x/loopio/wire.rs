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
                        // A 1xx was consumed: look for the real head.
                        if used > 0 && pos < input.len() {
                            continue;
                        }
                        return Ok(pos);
                    };
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
                        let (used, wrote) = call
                            .read(&input[pos..], self.body.room(self.filled, end))
                            .map_err(|e| WireError::Protocol(e.to_string()))?;
                        pos += used;
                        self.filled += wrote;
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
mod tests {
    use super::*;

    /// Feeds `bytes` in pieces of `step`, then the end of the connection
    /// if `close`.
    fn read(bytes: &[u8], step: usize, close: bool, cap: usize) -> Result<Reply, WireError> {
        let mut r = ResponseReader::for_get(cap);
        let mut pending: Vec<u8> = Vec::new();
        for piece in bytes.chunks(step.max(1)) {
            pending.extend_from_slice(piece);
            let used = r.feed(&pending)?;
            pending.drain(..used);
            if r.is_done() {
                break;
            }
        }
        if close && !r.is_done() {
            r.eof()?;
        }
        r.finish().ok_or(WireError::Incomplete)
    }

    #[test]
    fn the_request_is_a_get_with_host_accept_and_user_agent() {
        let (bytes, _) = get("http://127.0.0.1:8081/2/status/1?x=%20", 1).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with("GET /2/status/1?x=%20 HTTP/1.1\r\n"),
            "{text}"
        );
        assert!(text.contains("\r\nhost: 127.0.0.1:8081\r\n"), "{text}");
        assert!(text.contains("\r\naccept: application/json\r\n"), "{text}");
        assert!(
            text.contains(&format!("\r\nuser-agent: {USER_AGENT}\r\n")),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\n"));
        // The longest target a tool sends fits; a head over the output
        // buffer is refused, not cut.
        use crate::x::upstream::MAX_UPSTREAM_TARGET_BYTES;
        let long = format!(
            "http://a/2/search?q={}",
            "%E4".repeat(MAX_UPSTREAM_TARGET_BYTES / 3)
        );
        let (bytes, _) = get(&long, 1).unwrap();
        assert!(bytes.len() > MAX_UPSTREAM_TARGET_BYTES);
        let over = format!("http://a/?q={}", "a".repeat(UPSTREAM_OUTPUT_BUFFER_BYTES));
        assert!(matches!(get(&over, 1), Err(WireError::Protocol(_))));
    }

    #[test]
    fn bodies_in_every_framing_at_any_split() {
        let body: Vec<u8> = (0..5_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for part in body.chunks(777) {
            chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            chunked.extend_from_slice(part);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        let mut length =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nRetry-After: 7\r\nContent-Type: application/json\r\n\r\n", body.len()).into_bytes();
        length.extend_from_slice(&body);
        let mut closed = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        closed.extend_from_slice(&body);
        for step in [1, 7, 100, 4096, 1 << 20] {
            let r = read(&chunked, step, false, 1 << 20).unwrap();
            assert_eq!((&r.response.body[..], r.reusable), (&body[..], true));
            let r = read(&length, step, false, 1 << 20).unwrap();
            assert_eq!((&r.response.body[..], r.reusable), (&body[..], true));
            assert_eq!(r.response.retry_after.as_deref(), Some("7"));
            assert_eq!(r.response.content_type.as_deref(), Some("application/json"));
            let r = read(&closed, step, true, 1 << 20).unwrap();
            assert_eq!((&r.response.body[..], r.reusable), (&body[..], false));
            // Cut short: incomplete, whatever the framing.
            for cut in [&chunked, &length] {
                let e = read(&cut[..cut.len() - 3], step, true, 1 << 20).unwrap_err();
                assert_eq!(e, WireError::Incomplete);
            }
        }
    }

    #[test]
    fn the_cap_holds_in_every_framing() {
        let body = vec![b'x'; 101];
        let mut length = b"HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n".to_vec();
        length.extend_from_slice(&body);
        let mut closed = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        closed.extend_from_slice(&body);
        let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n".to_vec();
        chunked.extend_from_slice(&body);
        chunked.extend_from_slice(b"\r\n0\r\n\r\n");
        for bytes in [&length, &closed, &chunked] {
            assert_eq!(read(bytes, 9, true, 100).unwrap_err(), WireError::TooLarge);
            assert_eq!(read(bytes, 9, true, 101).unwrap().response.body.len(), 101);
        }
        let huge = b"HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n";
        assert_eq!(read(huge, 5, false, 100).unwrap_err(), WireError::TooLarge);
    }

    #[test]
    fn a_100_before_the_head_and_a_bodiless_status() {
        let r = read(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            3,
            false,
            10,
        )
        .unwrap();
        assert_eq!(
            (r.response.status, r.response.body.len(), r.reusable),
            (204, 0, true)
        );
        let r = read(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            64,
            false,
            10,
        )
        .unwrap();
        assert_eq!((r.response.status, r.reusable), (404, false));
        assert!(matches!(
            read(b"SSH-2.0-x\r\n\r\n", 64, true, 10),
            Err(WireError::Protocol(_))
        ));
    }

    /// How a generated response frames its body.
    #[derive(Debug, Clone, Copy)]
    enum Framing {
        Length,
        Chunked(usize),
        Close,
    }

    /// A 200 response carrying `body` framed so: its head, and the bytes
    /// after the head.
    fn response(body: &[u8], framing: Framing) -> (Vec<u8>, Vec<u8>) {
        let (head, rest) = match framing {
            Framing::Length => (
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()),
                body.to_vec(),
            ),
            Framing::Chunked(size) => {
                let mut rest = Vec::new();
                for c in body.chunks(size.max(1)) {
                    rest.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
                    rest.extend_from_slice(c);
                    rest.extend_from_slice(b"\r\n");
                }
                rest.extend_from_slice(b"0\r\n\r\n");
                (
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_string(),
                    rest,
                )
            }
            Framing::Close => (
                "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_string(),
                body.to_vec(),
            ),
        };
        (head.into_bytes(), rest)
    }

    use proptest::prelude::*;

    proptest! {
        /// The class "a gated reader reads no body byte before it is
        /// admitted": whatever the body, its framing and how the bytes
        /// come in pieces, a gated reader uses exactly the head's bytes,
        /// then asks for room for the announced length (none announced
        /// when chunked or delimited by the close) and uses nothing more,
        /// and once admitted reads the body whole. Oracle: the response as
        /// built (its head's length, its body).
        #[test]
        fn a_gated_reader_reads_no_body_byte_before_it_is_admitted(
            body in proptest::collection::vec(any::<u8>(), 1..6000),
            framing in prop_oneof![
                Just(Framing::Length),
                (1usize..700).prop_map(Framing::Chunked),
                Just(Framing::Close),
            ],
            step in 1usize..3000,
        ) {
            let (head, rest) = response(&body, framing);
            let all = [head.clone(), rest].concat();
            let mut r = ResponseReader::for_get(1 << 20);
            r.gate();
            let mut used_total = 0;
            let mut pending: Vec<u8> = Vec::new();
            let mut pieces = all.chunks(step);
            // Until the head is in: pieces fed, nothing used past it.
            while r.needs_room().is_none() {
                let piece = pieces.next().expect("the head asks for room");
                pending.extend_from_slice(piece);
                let used = r.feed(&pending).unwrap();
                pending.drain(..used);
                used_total += used;
            }
            prop_assert_eq!(used_total, head.len());
            let announced = matches!(framing, Framing::Length).then_some(body.len() as u64);
            prop_assert_eq!(r.needs_room(), Some(announced));
            // More bytes while waiting: none used.
            for piece in pieces.by_ref().take(2) {
                pending.extend_from_slice(piece);
                prop_assert_eq!(r.feed(&pending).unwrap(), 0);
            }
            prop_assert_eq!(r.needs_room(), Some(announced));
            r.admit();
            prop_assert_eq!(r.needs_room(), None);
            for piece in pieces {
                pending.extend_from_slice(piece);
            }
            let used = r.feed(&pending).unwrap();
            pending.drain(..used);
            if !r.is_done() {
                r.eof().unwrap();
            }
            let reply = r.finish().expect("whole");
            prop_assert_eq!(&reply.response.body[..], &body[..]);
        }
    }

    #[test]
    fn an_ungated_reader_needs_no_room() {
        let (head, rest) = response(b"abc", Framing::Length);
        let mut r = ResponseReader::for_get(10);
        assert_eq!(r.feed(&[head, rest].concat()).unwrap(), 41);
        assert!(r.needs_room().is_none() && r.is_done());
    }
}
