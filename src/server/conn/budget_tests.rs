//! Unit tests of a connection's share of the memory budget: bodies past
//! it are refused before they are read, chunked bodies reserve as they
//! grow.

use super::*;

#[test]
fn bodies_past_the_memory_budget_get_503_before_they_are_read() {
    let limits = Limits::default();
    let log = AccessLog::new(LogFormat::Off);
    let t0 = Instant::now();
    let ctx = ctx_at(&limits, &log, t0);
    let budget = Arc::new(MemoryBudget::new(100_000));
    let mut scratch = vec![0u8; READ_CHUNK_BYTES];
    let head = |n: usize| format!("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: {n}\r\n\r\n");
    let start = |n: usize| {
        let mut conn = Conn::with_budget(peer(), t0, Arc::clone(&budget));
        let mut src = Pieces {
            pieces: vec![head(n).into_bytes()],
            eof: false,
        };
        conn.read_from(&mut src, &mut scratch.clone(), &ctx, ReadUntil::Blocked)
            .unwrap();
        assert!(conn.process(&Echo, &ctx).is_none());
        conn
    };
    // 60,000 fits and is reserved whole before a byte of it arrives.
    let mut a = start(60_000);
    assert_eq!(budget.used(), 60_000);
    assert_eq!(a.closing(), None);
    // 50,000 more does not: 503, Retry-After, close; nothing reserved.
    let mut b = start(50_000);
    let mut sink = Sink {
        out: Vec::new(),
        budget: usize::MAX,
    };
    b.write_to(&mut sink, t0).unwrap();
    let out = String::from_utf8(sink.out).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{out}"
    );
    assert!(out.contains("Retry-After: 1\r\n"), "{out}");
    assert!(out.contains("Connection: close\r\n"), "{out}");
    assert_eq!(b.closing(), Some(CloseReason::Rejected(503)));
    assert_eq!(budget.used(), 60_000);
    // A small body needs no reservation.
    let c = start(UNBUDGETED_BODY_BYTES);
    assert_eq!(c.closing(), None);
    assert_eq!(budget.used(), 60_000);
    // The body arrives and is answered: the reservation is given back.
    let mut body = Pieces {
        pieces: vec![vec![b'y'; 60_000]],
        eof: false,
    };
    a.read_from(&mut body, &mut scratch, &ctx, ReadUntil::Blocked)
        .unwrap();
    assert!(a.process(&Echo, &ctx).is_none());
    // Its unsent answer is charged until written.
    assert!(
        budget.used() > 60_000 && budget.used() < 61_000,
        "{}",
        budget.used()
    );
    let mut sink = Sink {
        out: Vec::new(),
        budget: usize::MAX,
    };
    a.write_to(&mut sink, t0).unwrap();
    assert_eq!(budget.used(), 0);
    drop((a, b, c));
    assert_eq!(budget.used(), 0);
}

#[test]
fn a_chunked_body_reserves_as_it_grows_and_is_refused_past_the_budget() {
    let limits = Limits::default();
    let log = AccessLog::new(LogFormat::Off);
    let t0 = Instant::now();
    let ctx = ctx_at(&limits, &log, t0);
    let budget = Arc::new(MemoryBudget::new(150 * 1024));
    let scratch = vec![0u8; READ_CHUNK_BYTES];
    let mut conn = Conn::with_budget(peer(), t0, Arc::clone(&budget));
    let chunk = |n: usize| {
        let mut c = format!("{n:x}\r\n").into_bytes();
        c.extend(std::iter::repeat_n(b'z', n));
        c.extend_from_slice(b"\r\n");
        c
    };
    let feed = |conn: &mut Conn, bytes: Vec<u8>| {
        let mut src = Pieces {
            pieces: vec![bytes],
            eof: false,
        };
        let mut scratch = scratch.clone();
        loop {
            conn.read_from(&mut src, &mut scratch, &ctx, ReadUntil::Blocked)
                .unwrap();
            assert!(conn.process(&Echo, &ctx).is_none());
            if !conn.read_pending(&limits) {
                break;
            }
        }
    };
    feed(
        &mut conn,
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
    );
    // 10 KB: under the unbudgeted size, nothing reserved.
    feed(&mut conn, chunk(10_000));
    assert_eq!(budget.used(), 0);
    // 100 KB more: reserved in 64 KiB steps (128 KiB for 110 KB).
    feed(&mut conn, chunk(100_000));
    assert_eq!(budget.used(), 128 * 1024);
    assert_eq!(conn.closing(), None);
    // 100 KB more would need 256 KiB: 503, and the reservation is freed.
    feed(&mut conn, chunk(100_000));
    assert_eq!(conn.closing(), Some(CloseReason::Rejected(503)));
    let mut sink = Sink {
        out: Vec::new(),
        budget: usize::MAX,
    };
    conn.write_to(&mut sink, t0).unwrap();
    assert!(String::from_utf8_lossy(&sink.out).starts_with("HTTP/1.1 503 "));
    assert_eq!(budget.used(), 0);
    drop(scratch);
}
