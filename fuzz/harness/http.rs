//! HTTP properties: the connection state machine under arbitrary chunkings,
//! incremental head parsing, and the chunked-body decoder.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::Instant;

use super::{fnv1a, Input};
use crate::config::Limits;
use crate::http::chunked::ChunkedDecoder;
use crate::http::parse::try_parse_head;
use crate::http::{Body, Request, Response};
use crate::server::conn::{
    CloseReason, Conn, Ctx, Handled, Handler, Job, ReadUntil, MAX_PENDING_WRITE_BYTES,
    READ_CHUNK_BYTES,
};

const DATE: &str = "Thu, 01 Jan 1970 00:00:00 GMT";

/// The interim response `Conn` sends for `Expect: 100-continue` when the body
/// has not arrived yet; whether it is sent depends on the chunking, so the
/// comparison removes it.
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Largest response of the [`Digest`] handler or a rejection, encoded. The
/// pending-write cap stops parsing once passed, so the write buffer may hold
/// the cap plus one response.
const MAX_RESPONSE_BYTES: usize = 512;

/// Read events after which a connection that still makes no progress is a
/// liveness failure.
const MAX_EVENTS: usize = 1_000_000;

/// Answers every request with a digest of everything it received, so any
/// difference in parsing shows in the output. Targets starting with `/slow`
/// go to a "worker" (`Handled::Later`); `/close` asks to close.
struct Digest;

impl Handler for Digest {
    fn handle(&self, request: Request) -> Handled {
        let head = &request.head;
        let version = [head.minor_version];
        let mut parts: Vec<&[u8]> = vec![
            head.method.as_str().as_bytes(),
            head.target().as_bytes(),
            &version,
        ];
        for (name, value) in head.fields() {
            parts.push(name.as_bytes());
            parts.push(value);
        }
        parts.push(&request.body);
        let text = format!(
            "{:016x} {} {}",
            fnv1a(&parts),
            head.field_count(),
            request.body.len()
        );
        let mut response = Response::with_body(200, "text/plain", Body::Owned(text.into_bytes()));
        if head.target().starts_with("/close") {
            response = response.closing();
        }
        if head.target().starts_with("/slow") {
            Handled::Later(Box::new(move || response))
        } else {
            Handled::Now(response)
        }
    }
}

/// A reader yielding one piece, then `WouldBlock` or EOF.
struct Piece<'a> {
    data: &'a [u8],
    eof: bool,
}

impl Read for Piece<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.data.is_empty() {
            return if self.eof {
                Ok(0)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            };
        }
        let n = self.data.len().min(buf.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// A writer taking at most `budget` bytes per write event (`None`: all).
struct Sink {
    out: Vec<u8>,
    budget: Option<usize>,
    left: usize,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.budget.is_none() {
            self.out.extend_from_slice(buf);
            return Ok(buf.len());
        }
        if self.left == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        self.out.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How one run feeds the connection.
struct Plan<'a> {
    chunks: Vec<&'a [u8]>,
    eof: bool,
    scratch: usize,
    write_budget: Option<usize>,
    /// Complete worker jobs only at the next read event.
    defer_jobs: bool,
}

struct Driver<'l> {
    conn: Conn,
    limits: &'l Limits,
    now: Instant,
    sink: Sink,
    scratch: Vec<u8>,
    defer_jobs: bool,
    waiting: Option<Job>,
    bound: usize,
    events: usize,
    log: crate::server::log::AccessLog,
}

impl Driver<'_> {
    fn check_bound(&self, when: &str) {
        let cap = self.conn.buffered_capacity();
        assert!(
            cap <= self.bound,
            "buffered capacity {cap} passes the bound {} ({when})",
            self.bound
        );
    }

    /// One readiness event: finish a deferred job, read until `WouldBlock`
    /// (again while the read cap was hit), process and write after each read.
    fn event(&mut self, src: &mut Piece<'_>) {
        loop {
            self.events += 1;
            assert!(self.events < MAX_EVENTS, "connection makes no progress");
            let ctx = Ctx {
                log: &self.log,
                limits: self.limits,
                date: DATE,
                now: self.now,
                draining: false,
            };
            if let Some(job) = self.waiting.take() {
                self.conn.complete(job.run(), &ctx);
            }
            self.conn
                .read_from(src, &mut self.scratch, &ctx, ReadUntil::Blocked)
                .expect("in-memory reads cannot fail");
            self.check_bound("after read");
            while let Some(job) = self.conn.process(&Digest, &ctx) {
                if self.defer_jobs {
                    self.waiting = Some(job);
                    break;
                }
                self.conn.complete(job.run(), &ctx);
            }
            self.check_bound("after process");
            self.sink.left = self.sink.budget.unwrap_or(usize::MAX);
            self.conn
                .write_to(&mut self.sink, self.now)
                .expect("in-memory writes cannot fail");
            self.check_bound("after write");
            if !self.conn.read_pending(self.limits) {
                return;
            }
        }
    }
}

fn peer() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 9))
}

/// Feeds the plan, then drains with an unlimited writer until nothing moves.
/// Returns the bytes written and the close reason.
fn drive(plan: &Plan<'_>, limits: &Limits) -> (Vec<u8>, Option<CloseReason>) {
    let now = Instant::now();
    let mut d = Driver {
        conn: Conn::new(peer(), now),
        limits,
        now,
        sink: Sink {
            out: Vec::new(),
            budget: plan.write_budget,
            left: 0,
        },
        scratch: vec![0; plan.scratch],
        defer_jobs: plan.defer_jobs,
        waiting: None,
        log: crate::server::log::AccessLog::new(crate::config::LogFormat::Off),
        bound: limits.max_head_bytes
            + limits.max_body_bytes
            + READ_CHUNK_BYTES
            + MAX_PENDING_WRITE_BYTES
            + MAX_RESPONSE_BYTES
            + crate::http::outgoing::MAX_SLACK_BYTES,
        events: 0,
    };
    let mut last = Piece {
        data: &[],
        eof: plan.eof,
    };
    for (i, chunk) in plan.chunks.iter().enumerate() {
        let mut src = Piece {
            data: chunk,
            eof: plan.eof && i + 1 == plan.chunks.len(),
        };
        d.event(&mut src);
        last = src;
    }
    d.sink.budget = None;
    d.defer_jobs = false;
    loop {
        let before = d.sink.out.len();
        d.event(&mut last);
        if d.waiting.is_none() && !d.conn.wants_write() && d.sink.out.len() == before {
            break;
        }
    }
    assert!(!d.conn.is_waiting(), "a job was lost");
    (d.sink.out, d.conn.close_reason())
}

fn without_continue(out: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        if out[i..].starts_with(CONTINUE) {
            i += CONTINUE.len();
        } else {
            kept.push(out[i]);
            i += 1;
        }
    }
    kept
}

fn limits_from(input: &mut Input<'_>) -> Limits {
    let b = input.byte();
    let max_head_bytes = [16 * 1024, 24, 64, 200, 1024, 4096][usize::from(b % 6)];
    let max_headers = [64, 1, 3, 128][usize::from((b / 6) % 4)];
    let max_body_bytes = [1024 * 1024, 0, 1, 16, 100, 4096][usize::from(input.byte() % 6)];
    Limits {
        max_head_bytes,
        max_headers,
        max_body_bytes,
        ..Limits::default()
    }
}

/// HTTP bytes through `Conn` in the chunking the first input bytes choose:
/// the output (minus interim `100 Continue`) and close reason equal those of
/// one read of everything; buffers stay within max head + max body + one
/// read chunk + the pending-write cap + one response; no worker job is lost. Also runs
/// [`check_parse_head`] on the same bytes.
///
/// Input: `flags, budget, limits×2, repeat, splits…, data`.
pub fn check_http_conn(data: &[u8]) {
    let mut input = Input::new(data);
    let flags = input.byte();
    let budget = input.byte();
    let limits = limits_from(&mut input);
    let repeat = 1usize << (input.byte() % 5);
    let splits = usize::from(flags >> 4);
    let lens: Vec<usize> = input
        .take(splits)
        .iter()
        .map(|b| usize::from(*b) + 1)
        .collect();
    let body = input.rest();
    let payload = body.repeat(repeat);

    check_parse_head(body, limits.max_head_bytes, limits.max_headers);

    let mut chunks: Vec<&[u8]> = Vec::new();
    if splits == 15 && payload.len() <= 4096 {
        chunks.extend(payload.chunks(1));
    } else {
        let mut rest = payload.as_slice();
        for n in lens {
            let (a, b) = rest.split_at(n.min(rest.len()));
            if !a.is_empty() {
                chunks.push(a);
            }
            rest = b;
        }
        if !rest.is_empty() {
            chunks.push(rest);
        }
    }
    let plan = Plan {
        chunks,
        eof: flags & 1 != 0,
        scratch: [READ_CHUNK_BYTES, 1, 7, 300][usize::from((flags >> 2) & 3)],
        write_budget: (budget != 0).then(|| usize::from(budget) * 64),
        defer_jobs: flags & 2 != 0,
    };
    let reference = Plan {
        chunks: if payload.is_empty() {
            Vec::new()
        } else {
            vec![payload.as_slice()]
        },
        eof: plan.eof,
        scratch: READ_CHUNK_BYTES,
        write_budget: None,
        defer_jobs: false,
    };
    let (want, want_reason) = drive(&reference, &limits);
    let (got, got_reason) = drive(&plan, &limits);
    assert_eq!(
        String::from_utf8_lossy(&without_continue(&got)),
        String::from_utf8_lossy(&without_continue(&want)),
        "output depends on the chunking"
    );
    assert_eq!(
        got_reason, want_reason,
        "close reason depends on the chunking"
    );
}

/// `try_parse_head` on `data` and its prefixes: a complete head is no longer
/// than the input and every shorter prefix is incomplete; a refusal is
/// preceded only by "incomplete" or the same status; a complete head parses
/// the same from exactly its own bytes.
pub fn check_parse_head(data: &[u8], max_head_bytes: usize, max_headers: usize) {
    let full = try_parse_head(data, max_head_bytes, max_headers);
    // Every prefix when short, else an even sample plus the last one.
    let step = (data.len() / 128).max(1);
    let prefixes = (0..data.len())
        .step_by(step)
        .chain(data.len().checked_sub(1));
    match &full {
        Ok(Some((n, head))) => {
            assert!(*n <= data.len(), "consumed {n} of {} bytes", data.len());
            assert!(*n <= max_head_bytes, "head of {n} bytes accepted");
            for p in prefixes.filter(|p| p < n) {
                assert_eq!(
                    try_parse_head(&data[..p], max_head_bytes, max_headers),
                    Ok(None),
                    "prefix {p} of a complete {n}-byte head"
                );
            }
            let own = try_parse_head(&data[..*n], max_head_bytes, max_headers);
            assert_eq!(own, Ok(Some((*n, head.clone()))), "head alone");
        }
        Ok(None) => {
            assert!(
                data.len() < max_head_bytes.max(1),
                "incomplete past the cap"
            );
            for p in prefixes {
                assert_eq!(
                    try_parse_head(&data[..p], max_head_bytes, max_headers),
                    Ok(None),
                    "prefix {p} of an incomplete head"
                );
            }
        }
        Err(rejection) => {
            // 505: an HTTP version of another major number.
            assert!(
                matches!(rejection.status, 400 | 431 | 505),
                "status {}",
                rejection.status
            );
            for p in prefixes {
                match try_parse_head(&data[..p], max_head_bytes, max_headers) {
                    Ok(None) => {}
                    Err(r) if r.status == rejection.status => {}
                    other => panic!(
                        "prefix {p} gives {other:?}, the whole {} bytes {rejection:?}",
                        data.len()
                    ),
                }
            }
        }
    }
}

/// `ChunkedDecoder` fed in the pieces the first input bytes choose gives
/// the same result as one feed: same error status, or same consumed count,
/// completion and body. Consumed ≤ input; the body never passes the cap; a
/// complete body re-encoded as one chunk decodes to itself.
///
/// Input: `cap, splits, split lengths…, data`.
pub fn check_chunked(data: &[u8]) {
    let mut input = Input::new(data);
    let cap = [1024 * 1024, 0, 1, 5, 64, 1000][usize::from(input.byte() % 6)];
    let splits = usize::from(input.byte() % 32);
    let lens: Vec<usize> = input.take(splits).iter().map(|b| usize::from(*b)).collect();
    let data = input.rest();

    let mut whole = ChunkedDecoder::new(cap);
    let want = whole.feed(data);
    let mut pieces = ChunkedDecoder::new(cap);
    let mut used = 0;
    let mut got = Ok(0);
    let mut bounds: Vec<usize> = lens
        .iter()
        .scan(0, |at, n| {
            *at += n;
            Some(*at)
        })
        .filter(|b| *b < data.len())
        .collect();
    bounds.push(data.len());
    let mut start = 0;
    for end in bounds {
        if end < start {
            continue;
        }
        match pieces.feed(&data[start..end]) {
            Err(e) => {
                got = Err(e);
                break;
            }
            Ok(n) => {
                assert!(n <= end - start, "consumed {n} of {}", end - start);
                used += n;
                got = Ok(used);
                if pieces.is_done() {
                    break;
                }
                assert_eq!(n, end - start, "stopped early without finishing");
            }
        }
        start = end;
    }
    match (&want, &got) {
        (Err(a), Err(b)) => assert_eq!(a.status, b.status, "{a:?} vs {b:?}"),
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "consumed count depends on the split");
            assert!(*a <= data.len());
            assert_eq!(whole.is_done(), pieces.is_done());
            let body = whole.clone().into_body();
            assert!(body.len() <= cap, "body {} past cap {cap}", body.len());
            assert_eq!(body, pieces.clone().into_body(), "body depends on split");
            if whole.is_done() && !body.is_empty() {
                let mut again = format!("{:x}\r\n", body.len()).into_bytes();
                again.extend_from_slice(&body);
                again.extend_from_slice(b"\r\n0\r\n\r\n");
                let mut d = ChunkedDecoder::new(cap);
                assert_eq!(d.feed(&again), Ok(again.len()));
                assert!(d.is_done());
                assert_eq!(d.into_body(), body);
            }
        }
        _ => panic!("one feed gives {want:?}, pieces give {got:?}"),
    }
    if let Err(e) = want {
        assert!(matches!(e.status, 400 | 413 | 431), "status {}", e.status);
    }
}
