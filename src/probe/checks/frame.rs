//! FRAME: HTTP/1.1 framing (RFC 9110, RFC 9112), for any server or gateway.
//! Each check runs on its own connection; `--framing full` adds the
//! payloads that could desynchronise a shared upstream pool.

use super::raw_http::{head_without, parts, raw};
use super::{def, got, seen, tri, RFC9110, RFC9112};
use crate::probe::ctx::Ctx;
use crate::probe::wire::Exchange;
use crate::probe::{CheckDef, Era, Res};

/// Bytes of header fields in the oversized head: 80 KiB.
pub const OVERSIZED_HEAD_BYTES: usize = 80 * 1024;

pub(crate) const CHECKS: &[CheckDef] = &[
    def!(
        "FRAME-01",
        Must,
        Http,
        "Two different Content-Length values get 400",
        "RFC 9112 §6.3 item 5 (unrecoverable error: 400, close)",
        RFC9112_63,
        dup_cl,
        hostile
    ),
    def!(
        "FRAME-02",
        Must,
        Http,
        "An invalid Content-Length gets 400",
        "RFC 9112 §6.3 item 5; RFC 9110 §8.6",
        RFC9112_63,
        bad_cl,
        hostile
    ),
    def!(
        "FRAME-03",
        Must,
        Http,
        "Whitespace between a field name and the colon gets 400",
        "RFC 9112 §5.1 (a server MUST reject with 400)",
        RFC9112_51,
        space_before_colon,
        hostile
    ),
    def!(
        "FRAME-04",
        Should,
        Http,
        "An obs-fold line gets 400 or is read as SP (never a 5xx)",
        "RFC 9112 §5.2 (reject with 400 or replace each obs-fold with SP); §2.2 (a message off the grammar: SHOULD 400)",
        RFC9112_52,
        obs_fold,
        hostile
    ),
    def!(
        "FRAME-05",
        Must,
        Http,
        "An HTTP/1.1 request without Host gets 400",
        "RFC 9112 §3.2 (MUST respond 400)",
        RFC9112_32,
        no_host,
        hostile
    ),
    def!(
        "FRAME-06",
        Must,
        Http,
        "Two Host fields get 400",
        "RFC 9112 §3.2 (MUST respond 400)",
        RFC9112_32,
        two_hosts,
        hostile
    ),
    def!(
        "FRAME-07",
        Must,
        Http,
        "An invalid Host value gets 400",
        "RFC 9112 §3.2 (MUST respond 400)",
        RFC9112_32,
        bad_host,
        hostile
    ),
    def!(
        "FRAME-08",
        Should,
        Http,
        "A bare CR or NUL in a field value is rejected or read as SP (never a 5xx)",
        "RFC 9112 §2.2 (bare CR: invalid or SP; off the grammar: SHOULD 400); RFC 9110 §5.5 (CR, LF, NUL: reject or SP)",
        RFC9112_22,
        bare_cr,
        hostile
    ),
    def!(
        "FRAME-09",
        Should,
        Http,
        "An invalid chunk-size gets 400",
        "RFC 9112 §7.1 (chunk-size is 1*HEXDIG); §2.2 (a message off the grammar: SHOULD 400)",
        RFC9112_71,
        bad_chunk,
        hostile
    ),
    def!(
        "FRAME-10",
        Should,
        Http,
        "A chunk-size that overflows gets 400 (or 413)",
        "RFC 9112 §7.1 (recipients MUST anticipate overflow); §2.2 (a message off the grammar: SHOULD 400)",
        RFC9112_71,
        chunk_overflow,
        hostile
    ),
    def!(
        "FRAME-11",
        Must,
        Http,
        "Transfer-Encoding whose final coding is not chunked gets 400 and close",
        "RFC 9112 §6.3 item 4 (MUST respond 400 and close)",
        RFC9112_63,
        super::frame_conn::te_not_chunked,
        full
    ),
    def!(
        "FRAME-12",
        Must,
        Http,
        "Content-Length with Transfer-Encoding: the connection is closed after the response",
        "RFC 9112 §6.1 (MUST close the connection after responding)",
        RFC9112_61,
        super::frame_conn::cl_and_te,
        full
    ),
    def!(
        "FRAME-13",
        Must,
        Http,
        "Pipelined requests are answered in order",
        "RFC 9112 §9.3.2 (responses in the order the requests were received)",
        RFC9112_932,
        super::frame_conn::pipelined,
        hostile
    ),
    def!(
        "FRAME-14",
        Must,
        Http,
        "Expect: 100-continue gets 100 or a final status before the body",
        "RFC 9110 §10.1.1 (MUST send 100 or a final status)",
        RFC9110_1011,
        super::frame_conn::expect_continue,
        hostile
    ),
    def!(
        "FRAME-15",
        Must,
        Http,
        "A 405 carries Allow",
        "RFC 9110 §15.5.6 (the origin server MUST generate Allow)",
        RFC9110_1556,
        allow_on_405,
        hostile
    ),
    def!(
        "FRAME-16",
        Must,
        Http,
        "A response to HEAD has no body",
        "RFC 9110 §9.3.2 (the server MUST NOT send content)",
        RFC9110_932,
        super::frame_conn::head_no_body,
        hostile
    ),
    def!(
        "FRAME-17",
        Should,
        Http,
        "An unknown method gets 501",
        "RFC 9110 §9.1 (SHOULD respond 501)",
        RFC9110_91,
        unknown_method,
        hostile
    ),
    def!(
        "FRAME-18",
        Should,
        Http,
        "An oversized head (80 KiB) is answered without a 5xx: 431, 400, or served",
        "RFC 6585 §5 (431 Request Header Fields Too Large); RFC 9110 §15.6 (5xx: the server erred)",
        "https://www.rfc-editor.org/rfc/rfc6585#section-5",
        big_head,
        hostile
    ),
    def!(
        "FRAME-19",
        Should,
        Http,
        "A client stalled mid-head does not stop others being served",
        "RFC 9112 §9.5 (timeouts, graceful close); robustness",
        RFC9112_95,
        super::frame_conn::slow_client,
        hostile
    ),
    def!(
        "FRAME-20",
        Should,
        Http,
        "An unknown transfer coding gets 501",
        "RFC 9112 §6.1 (a coding it does not understand: SHOULD 501)",
        RFC9112_61,
        unknown_coding,
        hostile
    ),
];

const RFC9112_22: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-2.2";
const RFC9112_32: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-3.2";
const RFC9112_51: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-5.1";
const RFC9112_52: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-5.2";
const RFC9112_61: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-6.1";
const RFC9112_63: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-6.3";
const RFC9112_71: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-7.1";
const RFC9112_932: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-9.3.2";
const RFC9112_95: &str = "https://www.rfc-editor.org/rfc/rfc9112#section-9.5";
const RFC9110_91: &str = "https://www.rfc-editor.org/rfc/rfc9110#section-9.1";
const RFC9110_932: &str = "https://www.rfc-editor.org/rfc/rfc9110#section-9.3.2";
const RFC9110_1011: &str = "https://www.rfc-editor.org/rfc/rfc9110#section-10.1.1";
const RFC9110_1556: &str = "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6";
const _: (&str, &str) = (RFC9110, RFC9112);

fn expect_400(ex: &Exchange) -> Res {
    let r = tri!(got(ex));
    if r.status == 400 {
        Res::Pass
    } else {
        Res::Violation(format!("expected 400, got HTTP {}", r.status))
    }
}

fn with_cl(ctx: &mut Ctx, extra: &[&[u8]]) -> Exchange {
    let (h, body) = parts(ctx);
    let cl = format!("Content-Length: {}", body.len());
    let mut lines: Vec<&[u8]> = vec![cl.as_bytes()];
    lines.extend_from_slice(extra);
    let bytes = raw(ctx, "POST", &h, &lines, &body);
    ctx.raw(&bytes)
}

fn dup_cl(ctx: &mut Ctx, _era: Era) -> Res {
    let ex = with_cl(ctx, &[b"Content-Length: 3"]);
    expect_400(&ex)
}

fn bad_cl(ctx: &mut Ctx, _era: Era) -> Res {
    let (h, body) = parts(ctx);
    let cl = format!("Content-Length: {}x", body.len());
    let bytes = raw(ctx, "POST", &h, &[cl.as_bytes()], &body);
    let ex = ctx.raw(&bytes);
    expect_400(&ex)
}

fn space_before_colon(ctx: &mut Ctx, _era: Era) -> Res {
    let ex = with_cl(ctx, &[b"X-Probe : 1"]);
    expect_400(&ex)
}

fn no_5xx(ex: &Exchange) -> Res {
    let r = tri!(got(ex));
    if r.status >= 500 {
        Res::Violation(format!("HTTP {}", r.status))
    } else {
        Res::Pass
    }
}

fn obs_fold(ctx: &mut Ctx, _era: Era) -> Res {
    let ex = with_cl(ctx, &[b"X-Probe: a", b" b"]);
    no_5xx(&ex)
}

fn no_host(ctx: &mut Ctx, _era: Era) -> Res {
    let (h, body) = head_without(ctx, "host");
    let bytes = raw(ctx, "POST", &h, &[], &body);
    let ex = ctx.raw(&bytes);
    expect_400(&ex)
}

fn two_hosts(ctx: &mut Ctx, _era: Era) -> Res {
    let (h, body) = head_without(ctx, "");
    let bytes = raw(ctx, "POST", &h, &[b"Host: other.example"], &body);
    let ex = ctx.raw(&bytes);
    expect_400(&ex)
}

fn bad_host(ctx: &mut Ctx, _era: Era) -> Res {
    let (h, body) = head_without(ctx, "host");
    let bytes = raw(ctx, "POST", &h, &[b"Host: bad host/x"], &body);
    let ex = ctx.raw(&bytes);
    expect_400(&ex)
}

fn bare_cr(ctx: &mut Ctx, _era: Era) -> Res {
    for line in [&b"X-Probe: a\rb"[..], b"X-Probe: a\0b"] {
        let ex = with_cl(ctx, &[line]);
        if let Res::Violation(v) = no_5xx(&ex) {
            return Res::Violation(v);
        }
        tri!(got(&ex));
    }
    Res::Pass
}

fn chunked(ctx: &mut Ctx, te: &str, chunks: &[u8]) -> Exchange {
    let (mut h, _) = parts(ctx);
    h.push(("Transfer-Encoding".into(), te.into()));
    let bytes = raw(ctx, "POST", &h, &[], chunks);
    ctx.raw(&bytes)
}

fn bad_chunk(ctx: &mut Ctx, _era: Era) -> Res {
    let ex = chunked(ctx, "chunked", b"zz\r\n{}\r\n0\r\n\r\n");
    expect_400(&ex)
}

fn chunk_overflow(ctx: &mut Ctx, _era: Era) -> Res {
    let ex = chunked(
        ctx,
        "chunked",
        b"10000000000000000000002\r\n{}\r\n0\r\n\r\n",
    );
    let r = tri!(got(&ex));
    if r.status == 400 || r.status == 413 {
        Res::Pass
    } else {
        Res::Violation(format!("expected 400, got HTTP {}", r.status))
    }
}

fn bare(ctx: &mut Ctx, method: &str) -> Exchange {
    let (h, _) = head_without(ctx, "content-length");
    let h: Vec<_> = h
        .into_iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case("content-length"))
        .collect();
    let bytes = raw(ctx, method, &h, &[], b"");
    ctx.raw_opts(&bytes, method == "HEAD")
}

fn allow_on_405(ctx: &mut Ctx, _era: Era) -> Res {
    let ex = bare(ctx, "PUT");
    let r = tri!(got(&ex));
    if r.status != 405 {
        return Res::Skip(format!("PUT got HTTP {}, not 405", r.status));
    }
    if r.header("allow").is_some() {
        Res::Pass
    } else {
        Res::Violation("405 without Allow".into())
    }
}

fn unknown_method(ctx: &mut Ctx, _era: Era) -> Res {
    let ex = bare(ctx, "XMDPROBE");
    let r = tri!(got(&ex));
    if r.status == 501 {
        Res::Pass
    } else {
        Res::Violation(format!("expected 501, got HTTP {}", r.status))
    }
}

fn big_head(ctx: &mut Ctx, _era: Era) -> Res {
    let filler = format!("X-Probe-Filler: {}", "a".repeat(OVERSIZED_HEAD_BYTES));
    let ex = with_cl(ctx, &[filler.as_bytes()]);
    match &ex.response {
        Some(r) if r.status >= 500 => Res::Violation(format!("expected 431, got {}", seen(r))),
        _ => Res::Pass, // 431, 400, served, or closed: allowed
    }
}

fn unknown_coding(ctx: &mut Ctx, _era: Era) -> Res {
    let (h, body) = parts(ctx);
    let mut chunks = format!("{:x}\r\n", body.len()).into_bytes();
    chunks.extend_from_slice(&body);
    chunks.extend_from_slice(b"\r\n0\r\n\r\n");
    let bytes = raw(
        ctx,
        "POST",
        &h,
        &[b"Transfer-Encoding: xmdprobe, chunked"],
        &chunks,
    );
    let ex = ctx.raw(&bytes);
    let r = tri!(got(&ex));
    if r.status == 501 {
        Res::Pass
    } else {
        Res::Violation(format!("expected 501, got HTTP {}", r.status))
    }
}
