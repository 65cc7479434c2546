use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use super::*;
use crate::config::LogFormat;
use crate::http::Body;
use crate::server::log::AccessLog;

#[path = "budget_tests.rs"]
mod budget;
#[path = "closing_tests.rs"]
mod closing;

/// Answers every request at once with `<METHOD> <target> <body>`, or hands
/// `/slow` to a worker.
struct Echo;

impl Handler for Echo {
    fn handle(&self, request: Request) -> Handled {
        let text = format!(
            "{} {} {}",
            request.head.method.as_str(),
            request.head.target(),
            String::from_utf8_lossy(&request.body)
        );
        let response = Response::with_body(200, "text/plain", Body::Owned(text.into_bytes()));
        if request.head.target() == "/big" {
            return Handled::Now(Response::with_body(
                200,
                "text/plain",
                Body::Owned(vec![b'B'; 100_000]),
            ));
        }
        if request.head.target() == "/slow" {
            Handled::Later(Box::new(move || response))
        } else {
            Handled::Now(response)
        }
    }
}

/// A reader that yields the given pieces, then `WouldBlock` (or EOF).
struct Pieces {
    pieces: Vec<Vec<u8>>,
    eof: bool,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pieces.is_empty() {
            return if self.eof {
                Ok(0)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            };
        }
        let piece = &mut self.pieces[0];
        let n = piece.len().min(buf.len());
        buf[..n].copy_from_slice(&piece[..n]);
        piece.drain(..n);
        if piece.is_empty() {
            self.pieces.remove(0);
        }
        Ok(n)
    }
}

/// A writer that accepts at most `budget` bytes, then `WouldBlock`.
struct Sink {
    out: Vec<u8>,
    budget: usize,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.budget == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.budget);
        self.budget -= n;
        self.out.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const DATE: &str = "Thu, 01 Jan 1970 00:00:00 GMT";

/// A context at `now`, not draining.
fn ctx_at<'a>(limits: &'a Limits, log: &'a AccessLog, now: Instant) -> Ctx<'a> {
    Ctx {
        log,
        limits,
        date: DATE,
        now,
        draining: false,
    }
}

fn peer() -> SocketAddr {
    "127.0.0.1:9".parse().unwrap()
}

/// Feeds `chunks` one read event each, dispatching and writing after every
/// event; returns everything written and the final close reason.
fn run(chunks: &[&[u8]], eof: bool, limits: &Limits) -> (String, Option<CloseReason>) {
    let now = Instant::now();
    let ctx = Ctx {
        log: &AccessLog::new(LogFormat::Off),
        limits,
        date: DATE,
        now,
        draining: false,
    };
    let mut conn = Conn::new(peer(), now);
    let mut sink = Sink {
        out: Vec::new(),
        budget: usize::MAX,
    };
    let mut scratch = vec![0u8; 7];
    for (i, chunk) in chunks.iter().enumerate() {
        let mut src = Pieces {
            pieces: vec![chunk.to_vec()],
            eof: eof && i == chunks.len() - 1,
        };
        loop {
            conn.read_from(&mut src, &mut scratch, &ctx, ReadUntil::Blocked)
                .unwrap();
            while let Some(job) = conn.process(&Echo, &ctx) {
                conn.complete(job.run(), &ctx);
            }
            conn.write_to(&mut sink, now).unwrap();
            if !conn.read_pending(limits) {
                break;
            }
        }
    }
    let reason = if conn.wants_write() || conn.is_waiting() {
        None
    } else {
        conn.closing().or(conn.close_reason())
    };
    (String::from_utf8_lossy(&sink.out).into_owned(), reason)
}

fn ok(body: &str) -> String {
    format!("HTTP/1.1 200 OK\r\nDate: {DATE}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}", body.len())
}

const PIPELINE: &[u8] = b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /slow HTTP/1.1\r\nHost: h\r\n\r\nPOST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";

#[test]
fn pipelined_requests_answer_in_order_for_every_split() {
    let want = format!(
        "{}{}{}",
        ok("POST /a hello"),
        ok("GET /slow "),
        ok("POST /c abc")
    );
    let limits = Limits::default();
    let (all, reason) = run(&[PIPELINE], false, &limits);
    assert_eq!(all, want);
    assert_eq!(reason, None);
    for split in 1..PIPELINE.len() {
        let (out, _) = run(&[&PIPELINE[..split], &PIPELINE[split..]], false, &limits);
        assert_eq!(out, want, "split at {split}");
    }
}

#[test]
fn byte_at_a_time_gives_the_same_answers() {
    let chunks: Vec<&[u8]> = PIPELINE.chunks(1).collect();
    let want = format!(
        "{}{}{}",
        ok("POST /a hello"),
        ok("GET /slow "),
        ok("POST /c abc")
    );
    assert_eq!(run(&chunks, false, &Limits::default()).0, want);
}

#[test]
fn short_body_leftovers_become_a_bad_request_and_close() {
    // Content-Length 3 for a 7-byte body: the 4 leftover bytes run into the
    // next request line and make it malformed; they are never skipped.
    let raw =
        b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n{\"a\":1}GET / HTTP/1.1\r\n\r\n";
    let (out, reason) = run(&[raw], false, &Limits::default());
    assert!(out.starts_with(&ok("POST /a {\"a")), "{out}");
    let rest = &out[ok("POST /a {\"a").len()..];
    assert!(rest.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{rest}");
    assert!(rest.contains("Connection: close\r\n"), "{rest}");
    assert_eq!(reason, Some(CloseReason::Rejected(400)));
}

#[test]
fn rejection_stops_pipelined_requests() {
    let raw = b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n";
    let (out, reason) = run(&[raw], false, &Limits::default());
    assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
    assert!(!out.contains("/after"), "{out}");
    assert_eq!(out.matches("HTTP/1.1").count(), 1);
    assert_eq!(reason, Some(CloseReason::Rejected(400)));
}

#[test]
fn limits_map_to_status_codes() {
    let limits = Limits {
        max_body_bytes: 10,
        ..Limits::default()
    };
    let (out, _) = run(
        &[b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n"],
        false,
        &limits,
    );
    assert!(
        out.starts_with("HTTP/1.1 413 Content Too Large\r\n"),
        "{out}"
    );
    let (out, _) = run(
        &[b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nB\r\n"],
        false,
        &limits,
    );
    assert!(
        out.starts_with("HTTP/1.1 413 Content Too Large\r\n"),
        "{out}"
    );
    let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
    let (out, reason) = run(&[big.as_bytes()], false, &Limits::default());
    assert!(
        out.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{out}"
    );
    assert_eq!(reason, Some(CloseReason::Rejected(431)));
}

#[test]
fn expect_continue_gets_an_interim_response_first() {
    let head: &[u8] =
        b"POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
    let (out, _) = run(&[head, b"{}"], false, &Limits::default());
    assert_eq!(
        out,
        format!("HTTP/1.1 100 Continue\r\n\r\n{}", ok("POST /e {}"))
    );
    let (out, _) = run(
        &[b"POST /e HTTP/1.1\r\nExpect: nope\r\nContent-Length: 2\r\n\r\n"],
        false,
        &Limits::default(),
    );
    assert!(
        out.starts_with("HTTP/1.1 417 Expectation Failed\r\n"),
        "{out}"
    );
}

#[test]
fn http10_and_connection_close_end_the_connection() {
    let (out, reason) = run(&[b"GET /x HTTP/1.0\r\n\r\n"], false, &Limits::default());
    assert!(out.contains("Connection: close\r\n"), "{out}");
    assert_eq!(reason, Some(CloseReason::ConnectionClose));
    let (out, reason) = run(
        &[b"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"],
        false,
        &Limits::default(),
    );
    assert!(out.contains("Connection: keep-alive\r\n"), "{out}");
    assert_eq!(reason, None);
}

#[test]
fn half_close_still_gets_its_answer() {
    let (out, reason) = run(
        &[b"GET /slow HTTP/1.1\r\nHost: h\r\n\r\n"],
        true,
        &Limits::default(),
    );
    assert_eq!(out, ok("GET /slow "));
    assert_eq!(reason, Some(CloseReason::PeerClosed));
}

#[test]
fn partial_writes_resume_where_they_stopped() {
    let limits = Limits::default();
    let now = Instant::now();
    let log = AccessLog::new(LogFormat::Off);
    let ctx = ctx_at(&limits, &log, now);
    let mut conn = Conn::new(peer(), now);
    let mut src = Pieces {
        pieces: vec![b"GET /w HTTP/1.1\r\n\r\n".to_vec()],
        eof: false,
    };
    let mut scratch = vec![0u8; 64];
    conn.read_from(&mut src, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert!(conn.process(&Echo, &ctx).is_none());
    let mut sink = Sink {
        out: Vec::new(),
        budget: 10,
    };
    conn.write_to(&mut sink, now).unwrap();
    assert!(conn.wants_write());
    sink.budget = usize::MAX;
    conn.write_to(&mut sink, now).unwrap();
    assert!(!conn.wants_write());
    assert_eq!(String::from_utf8(sink.out).unwrap(), ok("GET /w "));
    assert_eq!(
        conn.buffered_capacity(),
        0,
        "idle connection holds no buffers"
    );
}

#[test]
fn deadlines_answer_408_or_close_idle() {
    let limits = Limits {
        header_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(5),
        ..Limits::default()
    };
    let t0 = Instant::now();
    let no_log = AccessLog::new(LogFormat::Off);
    let ctx = |now| Ctx {
        log: &no_log,
        limits: &limits,
        date: DATE,
        now,
        draining: false,
    };
    let mut conn = Conn::new(peer(), t0);
    let mut src = Pieces {
        pieces: vec![b"GET / HT".to_vec()],
        eof: false,
    };
    let mut scratch = vec![0u8; 64];
    conn.read_from(&mut src, &mut scratch, &ctx(t0), ReadUntil::Blocked)
        .unwrap();
    assert!(conn.process(&Echo, &ctx(t0)).is_none());
    assert!(!conn.check_deadlines(&ctx(t0 + Duration::from_secs(1))));
    assert!(!conn.check_deadlines(&ctx(t0 + Duration::from_secs(2))));
    let mut sink = Sink {
        out: Vec::new(),
        budget: usize::MAX,
    };
    conn.write_to(&mut sink, t0).unwrap();
    let out = String::from_utf8(sink.out).unwrap();
    assert!(out.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{out}");
    assert_eq!(conn.closing(), Some(CloseReason::Rejected(408)));

    let idle = Conn::new(peer(), t0);
    let mut idle = idle;
    assert!(!idle.check_deadlines(&ctx(t0 + Duration::from_secs(4))));
    assert!(idle.check_deadlines(&ctx(t0 + Duration::from_secs(5))));
}

#[test]
fn pipelined_requests_behind_pending_output_are_answered_once_it_drains() {
    // Six 100 KB answers pass the 256 KiB pending-output cap: parsing
    // pauses, and must resume as soon as the output drains, without
    // waiting for another readiness event (the peer has sent everything).
    let one = b"GET /big HTTP/1.1\r\nHost: h\r\n\r\n";
    let raw: Vec<u8> = one.iter().copied().cycle().take(one.len() * 6).collect();
    let limits = Limits::default();
    let now = Instant::now();
    let log = AccessLog::new(LogFormat::Off);
    let ctx = Ctx {
        log: &log,
        limits: &limits,
        date: DATE,
        now,
        draining: false,
    };
    let mut conn = Conn::new(peer(), now);
    let mut src = Pieces {
        pieces: vec![raw],
        eof: false,
    };
    let mut scratch = vec![0u8; 4096];
    let mut sink = Sink {
        out: Vec::new(),
        budget: usize::MAX,
    };
    conn.read_from(&mut src, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    // What the event loop's `drive` does for one readiness event.
    loop {
        assert!(conn.process(&Echo, &ctx).is_none());
        conn.write_to(&mut sink, now).unwrap();
        if !conn.resume_pending() {
            break;
        }
    }
    let text = String::from_utf8(sink.out).unwrap();
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 6);
}

/// `ReadUntil::Short` stops after a read that returned less than asked
/// (the receive queue was empty then; a later arrival raises a new edge),
/// saving the read that would only return `WouldBlock`. `Blocked` reads on
/// to `WouldBlock` and sees a queued EOF.
#[test]
fn short_read_ends_an_edge_triggered_read() {
    let limits = Limits::default();
    let now = Instant::now();
    let log = AccessLog::new(LogFormat::Off);
    let ctx = ctx_at(&limits, &log, now);
    let mut scratch = vec![0u8; 64];
    let pieces = || Pieces {
        pieces: vec![
            b"GET /a HTTP/1.1\r\n\r\n".to_vec(),
            b"GET /b HTTP/1.1\r\n\r\n".to_vec(),
        ],
        eof: true,
    };

    let mut short = Conn::new(peer(), now);
    let mut src = pieces();
    short
        .read_from(&mut src, &mut scratch, &ctx, ReadUntil::Short)
        .unwrap();
    assert_eq!(
        src.pieces.len(),
        1,
        "the second arrival is left for its own event"
    );
    assert!(!short.read_eof);
    // A full-sized read does not end it: more may be queued.
    let mut big = Conn::new(peer(), now);
    let mut src = Pieces {
        pieces: vec![vec![b'x'; 64], b"tail".to_vec()],
        eof: false,
    };
    big.read_from(&mut src, &mut scratch, &ctx, ReadUntil::Short)
        .unwrap();
    assert!(src.pieces.is_empty());
    assert_eq!(big.rbuf.len(), 68);

    let mut blocked = Conn::new(peer(), now);
    let mut src = pieces();
    blocked
        .read_from(&mut src, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert!(src.pieces.is_empty());
    assert!(blocked.read_eof, "a queued EOF is seen");
    assert_eq!(blocked.rbuf.len(), 38);
}
