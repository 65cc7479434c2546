//! Unit tests of a refused connection's lingering close: it reads and
//! discards until EOF, the byte cap or the timeout.

use super::*;

#[test]
fn a_refused_connection_lingers_until_eof_the_byte_cap_or_the_timeout() {
    let limits = Limits::default();
    let log = AccessLog::new(LogFormat::Off);
    let t0 = Instant::now();
    let ctx = ctx_at(&limits, &log, t0);
    let mut sink = Sink {
        out: Vec::new(),
        budget: usize::MAX,
    };
    let mut scratch = vec![0u8; READ_CHUNK_BYTES];
    // A 413 for an announced body past the cap, while the body streams on.
    let mut conn = Conn::new(peer(), t0);
    let mut src = Pieces {
        pieces: vec![b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 9999999\r\n\r\n".to_vec()],
        eof: false,
    };
    conn.read_from(&mut src, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert!(conn.process(&Echo, &ctx).is_none());
    conn.write_to(&mut sink, t0).unwrap();
    assert!(String::from_utf8_lossy(&sink.out).starts_with("HTTP/1.1 413 "));
    assert!(conn.wants_linger());
    assert_eq!(conn.close_reason(), None);
    conn.begin_linger(t0);
    assert!(!conn.wants_linger());
    // Input keeps being discarded, nothing parsed or answered.
    let before = sink.out.len();
    let mut body = Pieces {
        pieces: vec![vec![b'x'; 300_000]],
        eof: false,
    };
    conn.read_from(&mut body, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert!(conn.process(&Echo, &ctx).is_none());
    conn.write_to(&mut sink, t0).unwrap();
    assert_eq!(sink.out.len(), before);
    assert_eq!(conn.close_reason(), None);
    assert!(!conn.check_deadlines(&ctx_at(&limits, &log, t0 + Duration::from_secs(1))));
    // EOF closes it.
    let mut eof = Pieces {
        pieces: vec![],
        eof: true,
    };
    conn.read_from(&mut eof, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert_eq!(conn.close_reason(), Some(CloseReason::Rejected(413)));
    // Without EOF: LINGER_TIMEOUT, or LINGER_MAX_BYTES discarded.
    let mut conn = Conn::new(peer(), t0);
    let mut src = Pieces {
        pieces: vec![b"GET / HTTP/1.0\r\n\r\n".to_vec()],
        eof: false,
    };
    conn.read_from(&mut src, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert!(conn.process(&Echo, &ctx).is_none());
    conn.write_to(&mut sink, t0).unwrap();
    assert!(conn.wants_linger());
    conn.begin_linger(t0);
    assert!(!conn.check_deadlines(&ctx_at(
        &limits,
        &log,
        t0 + LINGER_TIMEOUT - Duration::from_millis(1)
    )));
    assert!(conn.check_deadlines(&ctx_at(&limits, &log, t0 + LINGER_TIMEOUT)));
    let mut flood = Pieces {
        pieces: vec![vec![b'x'; LINGER_MAX_BYTES + 1]],
        eof: false,
    };
    conn.read_from(&mut flood, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert_eq!(conn.close_reason(), Some(CloseReason::ConnectionClose));
}
