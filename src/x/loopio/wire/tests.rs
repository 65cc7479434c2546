//! The response reader's tests: framing at any split, the cap, 1xx, the
//! room gate, the head cap.

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

proptest::proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A head up to [`MAX_UPSTREAM_HEAD_BYTES`] is read, one past it is
    /// refused as a bad response, at any split and whether it comes whole
    /// or never ends (the reader gives up once the cap is passed, without
    /// waiting for the end of the head).
    #[test]
    fn a_head_past_the_cap_is_refused_at_any_split(
        over in -300i64..300,
        step in prop_oneof![700usize..4096, 4096usize..70_000, 70_000usize..200_000],
        ended in proptest::bool::ANY,
    ) {
        let fixed = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Long: \r\n\r\n".len();
        let filler = (MAX_UPSTREAM_HEAD_BYTES as i64 + over - fixed as i64) as usize;
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Long: {}\r\n\r\n",
            "v".repeat(filler)
        );
        proptest::prop_assert_eq!(head.len() as i64, MAX_UPSTREAM_HEAD_BYTES as i64 + over);
        let mut bytes = head.into_bytes();
        if ended {
            bytes.extend_from_slice(b"{}");
        } else {
            // The head never ends: its last CRLF never comes.
            bytes.truncate(bytes.len() - 4);
        }
        let got = read(&bytes, step, false, 1 << 20);
        // The head's bytes the reader holds: all of them when it ended
        // (the 2 body bytes aside), else the unended head, 4 bytes short
        // (an `over` of 1 to 4 then stays within the cap: no answer yet).
        let held = bytes.len() - if ended { 2 } else { 0 };
        let past_the_cap = held > MAX_UPSTREAM_HEAD_BYTES;
        match (past_the_cap, ended) {
            (false, true) => {
                let reply = got.expect("a head within the cap is read");
                proptest::prop_assert_eq!(&*reply.response.body, b"{}");
            }
            (true, _) => proptest::prop_assert_eq!(
                got.err(),
                Some(WireError::Protocol(format!(
                    "response head over {MAX_UPSTREAM_HEAD_BYTES} bytes"
                )))
            ),
            (false, false) => proptest::prop_assert!(got.is_err(), "an unended head is no answer"),
        }
    }
}

/// Where a chunked answer's framing line that runs long stands.
#[derive(Debug, Clone, Copy)]
enum LongLine {
    /// A chunk-size line with an extension: `1;xxx…`.
    SizeExtension,
    /// Bytes where the CRLF after a chunk's data belongs.
    AfterData,
    /// A trailer field line: `X-T: xxx…`.
    TrailerField,
}

proptest::proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A framing line of a chunked body that has not ended is kept up to
    /// [`MAX_UPSTREAM_FRAMING_BYTES`] and refused as a bad response once
    /// more is kept, wherever it stands and at any split: the reader never
    /// holds more than the cap and one piece. Oracle: the line's length,
    /// known by construction (a line within the cap is still awaited: no
    /// answer and no error).
    #[test]
    fn an_unended_framing_line_is_refused_past_the_cap(
        at in prop_oneof![
            Just(LongLine::SizeExtension),
            Just(LongLine::AfterData),
            Just(LongLine::TrailerField),
        ],
        over in -300i64..300,
        step in prop_oneof![1usize..700, 700usize..4096, 4096usize..70_000, 70_000usize..200_000],
    ) {
        let (before, opening) = match at {
            LongLine::SizeExtension => ("", "1;"),
            LongLine::AfterData => ("1\r\n{", ""),
            LongLine::TrailerField => ("1\r\n{\r\n0\r\n", "X-T: "),
        };
        let line_len = (MAX_UPSTREAM_FRAMING_BYTES as i64 + over) as usize;
        let mut bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        bytes.extend_from_slice(before.as_bytes());
        bytes.extend_from_slice(opening.as_bytes());
        bytes.resize(bytes.len() + line_len - opening.len(), b'x');
        let got = read(&bytes, step, false, 1 << 20);
        if over > 0 {
            proptest::prop_assert_eq!(
                got.err(),
                Some(WireError::Protocol(format!(
                    "chunked framing line or trailer section over {MAX_UPSTREAM_FRAMING_BYTES} bytes"
                )))
            );
        } else {
            proptest::prop_assert_eq!(got.err(), Some(WireError::Incomplete), "still awaited");
        }
    }

    /// A trailer section of short field lines is read and dropped up to
    /// [`MAX_UPSTREAM_FRAMING_BYTES`] (the body is whole) and refused
    /// past the cap and one piece, at any split. Oracle: the section's
    /// length, known by construction.
    #[test]
    fn a_trailer_section_past_the_cap_is_refused(
        over in -2000i64..2000,
        field in 1usize..200,
        step in prop_oneof![1usize..700, 700usize..4096, 4096usize..30_000],
    ) {
        let total = (MAX_UPSTREAM_FRAMING_BYTES as i64 + over) as usize;
        let mut trailer = Vec::with_capacity(total + 200);
        while trailer.len() < total {
            let line = format!("X-T: {}\r\n", "t".repeat(field));
            trailer.extend_from_slice(line.as_bytes());
        }
        let mut bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n".to_vec();
        bytes.extend_from_slice(&trailer);
        bytes.extend_from_slice(b"\r\n");
        let got = read(&bytes, step, false, 1 << 20);
        let over_the_cap = Some(WireError::Protocol(format!(
            "chunked framing line or trailer section over {MAX_UPSTREAM_FRAMING_BYTES} bytes"
        )));
        if trailer.len() <= MAX_UPSTREAM_FRAMING_BYTES {
            let reply = got.expect("a trailer section within the cap is read");
            proptest::prop_assert_eq!(&*reply.response.body, b"{}");
        } else if trailer.len() > MAX_UPSTREAM_FRAMING_BYTES + step + field + 7 {
            proptest::prop_assert_eq!(got.err(), over_the_cap);
        } else {
            // Within one piece of the cap: read whole or refused.
            match got {
                Ok(reply) => proptest::prop_assert_eq!(&*reply.response.body, b"{}"),
                Err(e) => proptest::prop_assert_eq!(Some(e), over_the_cap),
            }
        }
    }
}

/// An interim head: `100 Continue` (no fields, RFC 9110 §15.2.1) or a
/// `103 Early Hints` with one field of `filler` bytes.
fn interim_head(continue_: bool, filler: usize) -> String {
    if continue_ {
        "HTTP/1.1 100 Continue\r\n\r\n".to_string()
    } else {
        format!(
            "HTTP/1.1 103 Early Hints\r\nX-P: {}\r\n\r\n",
            "p".repeat(filler)
        )
    }
}

proptest::proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Interim (1xx) heads count with the final head in
    /// [`MAX_UPSTREAM_HEAD_BYTES`]: heads up to it in all are read (the
    /// body is whole), past it refused as a bad response, at any split
    /// and however many interim heads there are. Oracle: the heads'
    /// total length, known by construction.
    #[test]
    fn interim_heads_count_with_the_final_head_in_the_cap(
        kinds in prop::collection::vec(proptest::bool::ANY, 1..40),
        over in -2000i64..2000,
        step in prop_oneof![1usize..700, 700usize..4096, 4096usize..70_000, 70_000usize..300_000],
    ) {
        let last = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n";
        let hints = kinds.iter().filter(|c| !**c).count();
        let fixed: usize = kinds.iter().map(|c| interim_head(*c, 0).len()).sum::<usize>() + last.len();
        let target = (MAX_UPSTREAM_HEAD_BYTES as i64 + over) as usize;
        let filler = target.saturating_sub(fixed);
        let mut heads = String::new();
        let mut nth_hint = 0;
        for &c in &kinds {
            let share = if c || hints == 0 {
                0
            } else {
                nth_hint += 1;
                filler / hints + usize::from(nth_hint == 1) * (filler % hints)
            };
            heads.push_str(&interim_head(c, share));
        }
        heads.push_str(last);
        let total = heads.len();
        if hints > 0 {
            proptest::prop_assert_eq!(total, target.max(fixed));
        }
        let mut bytes = heads.into_bytes();
        bytes.extend_from_slice(b"{}");
        let got = read(&bytes, step, false, 1 << 20);
        if total <= MAX_UPSTREAM_HEAD_BYTES {
            let reply = got.expect("heads within the cap are read");
            proptest::prop_assert_eq!(reply.response.status, 200);
            proptest::prop_assert_eq!(&*reply.response.body, b"{}");
        } else {
            proptest::prop_assert_eq!(got.err(), Some(head_over()));
        }
    }
}

/// An endless run of interim heads is refused once they pass the cap,
/// whatever the pieces: 10,000 `100 Continue` (250,000 bytes) before a
/// 200 are no answer.
#[test]
fn an_endless_run_of_interim_heads_is_refused_at_the_cap() {
    let mut bytes = "HTTP/1.1 100 Continue\r\n\r\n".repeat(10_000).into_bytes();
    bytes.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
    for step in [1, 25, 4096, 16 * 1024, 1 << 20] {
        let mut r = ResponseReader::for_get(1 << 20);
        let mut fed = 0;
        let mut pending: Vec<u8> = Vec::new();
        let err = loop {
            let piece = &bytes[fed..(fed + step).min(bytes.len())];
            fed += piece.len();
            pending.extend_from_slice(piece);
            match r.feed(&pending) {
                Ok(used) => {
                    pending.drain(..used);
                }
                Err(e) => break e,
            }
            assert!(!r.is_done(), "step {step}: answered");
        };
        assert_eq!(err, head_over(), "step {step}");
        // Refused within a piece (and a head) of the cap.
        assert!(
            fed <= MAX_UPSTREAM_HEAD_BYTES + step + 25,
            "step {step}: {fed} bytes read"
        );
    }
}
