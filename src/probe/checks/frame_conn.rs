//! FRAME checks that drive a connection themselves: they read past one
//! response (is the connection closed? is a second answer coming? does a
//! `100 Continue` come before the body?).

use std::time::{Duration, Instant};

use serde_json::json;

use super::raw_http::{head_without, parts, raw, SHORT_WAIT};
use super::{primary, seen};
use crate::probe::ctx::Ctx;
use crate::probe::wire::{self, Conn, Exchange};
use crate::probe::{Era, Res};

pub(super) fn te_not_chunked(ctx: &mut Ctx, _era: Era) -> Res {
    let (h, body) = parts(ctx);
    let mut bytes = raw(
        ctx,
        "POST",
        &h,
        &[b"Transfer-Encoding: chunked, identity"],
        &[],
    );
    bytes.extend_from_slice(format!("{:x}\r\n", body.len()).as_bytes());
    bytes.extend_from_slice(&body);
    bytes.extend_from_slice(b"\r\n0\r\n\r\n");
    drive(ctx, &bytes, |r, closed| {
        if r.status != 400 {
            Res::Violation(format!("expected 400, got HTTP {}", r.status))
        } else if !closed {
            Res::Violation("400, but the connection stayed open".into())
        } else {
            Res::Pass
        }
    })
}

/// Sends `bytes` on a connection the check keeps, reads one response and
/// whether the server closes within [`SHORT_WAIT`].
fn drive(ctx: &mut Ctx, bytes: &[u8], judge: impl FnOnce(&wire::Response, bool) -> Res) -> Res {
    if !ctx.count() {
        return Res::Inconclusive(crate::probe::ctx::BUDGET_SPENT.into());
    }
    on_conn(
        ctx,
        bytes,
        |c| {
            c.send(bytes)?;
            let r = c.read_response(false)?;
            let closed = r.closed || c.closed_within(SHORT_WAIT);
            Ok((r, closed))
        },
        |r, closed| judge(r, *closed),
    )
}

/// One exchange on a connection of its own: `io` sends `request` (and
/// whatever follows) and reads; the request, the first response (or the
/// error) and the time go into the evidence, and `judge` rules on what `io`
/// read. No response at all is inconclusive.
fn on_conn<T>(
    ctx: &mut Ctx,
    request: &[u8],
    io: impl FnOnce(&mut Conn) -> Result<(wire::Response, T), String>,
    judge: impl FnOnce(&wire::Response, &T) -> Res,
) -> Res {
    let start = Instant::now();
    let mut ex = Exchange {
        request: wire::redact(request),
        request_len: request.len(),
        ..Exchange::default()
    };
    let res = Conn::open(&ctx.target, ctx.cfg.timeout).and_then(|mut c| io(&mut c));
    ex.elapsed_ms = start.elapsed().as_millis() as u64;
    let out = match &res {
        Ok((r, t)) => judge(r, t),
        Err(e) => Res::Inconclusive(format!("no response: {e}")),
    };
    match res {
        Ok((r, _)) => ex.response = Some(r),
        Err(e) => ex.error = Some(e),
    }
    ctx.evidence.push(ex);
    out
}

pub(super) fn cl_and_te(ctx: &mut Ctx, _era: Era) -> Res {
    let (h, body) = parts(ctx);
    let mut chunks = format!("{:x}\r\n", body.len()).into_bytes();
    chunks.extend_from_slice(&body);
    chunks.extend_from_slice(b"\r\n0\r\n\r\n");
    let cl = format!("Content-Length: {}", chunks.len());
    let bytes = raw(
        ctx,
        "POST",
        &h,
        &[cl.as_bytes(), b"Transfer-Encoding: chunked"],
        &chunks,
    );
    drive(ctx, &bytes, |r, closed| {
        if r.status >= 500 {
            Res::Violation(format!("HTTP {}", r.status))
        } else if !closed {
            Res::Violation(format!("HTTP {}, and the connection stayed open", r.status))
        } else {
            Res::Pass
        }
    })
}

pub(super) fn pipelined(ctx: &mut Ctx, _era: Era) -> Res {
    if !ctx.count() {
        return Res::Inconclusive(crate::probe::ctx::BUDGET_SPENT.into());
    }
    let era = primary(ctx);
    let m = if era == Era::Modern {
        "server/discover"
    } else {
        "ping"
    };
    let mut bytes = Vec::new();
    let ids = [
        format!("probe-a-{}", ctx.rng.token(4)),
        format!("probe-b-{}", ctx.rng.token(4)),
    ];
    for id in &ids {
        let body = ctx.body(era, json!(id), m, json!({}));
        let h = ctx.headers_for(era, &body);
        bytes.extend(wire::build(
            "POST",
            &ctx.target.target,
            &h,
            body.to_string().as_bytes(),
        ));
    }
    on_conn(
        ctx,
        &bytes,
        |c| {
            c.send(&bytes)?;
            let a = c.read_response(false)?;
            let b = if a.closed {
                None
            } else {
                c.read_response(false).ok()
            };
            Ok((a, b))
        },
        |a, b| match b {
            None if a.closed => Res::Pass, // answering one and closing is allowed (RFC 9112 §9.3.2 retries)
            None => Res::Violation("the second pipelined request was not answered".into()),
            Some(b) => {
                let got_ids = [
                    a.rpc().and_then(|m| m.get("id").cloned()),
                    b.rpc().and_then(|m| m.get("id").cloned()),
                ];
                if got_ids == [Some(json!(ids[0])), Some(json!(ids[1]))] {
                    Res::Pass
                } else {
                    Res::Violation(format!("answered ids {got_ids:?}, sent {ids:?}"))
                }
            }
        },
    )
}

pub(super) fn expect_continue(ctx: &mut Ctx, _era: Era) -> Res {
    if !ctx.count() {
        return Res::Inconclusive(crate::probe::ctx::BUDGET_SPENT.into());
    }
    let (mut h, body) = parts(ctx);
    h.push(("Content-Length".into(), body.len().to_string()));
    h.push(("Expect".into(), "100-continue".into()));
    let head = raw(ctx, "POST", &h, &[], b"");
    on_conn(
        ctx,
        &head,
        |c| {
            c.send(&head)?;
            c.set_read_timeout(SHORT_WAIT);
            let early = c.stray_bytes(SHORT_WAIT);
            c.reset_read_timeout();
            c.send(&body)?;
            let r = c.read_response(false)?;
            Ok((r, early))
        },
        |_, early| {
            if *early == 0 {
                Res::Violation(format!(
                    "nothing within {} s of the head (neither 100 nor a final status)",
                    SHORT_WAIT.as_secs()
                ))
            } else {
                Res::Pass
            }
        },
    )
}

pub(super) fn head_no_body(ctx: &mut Ctx, _era: Era) -> Res {
    if !ctx.count() {
        return Res::Inconclusive(crate::probe::ctx::BUDGET_SPENT.into());
    }
    let (h, _) = head_without(ctx, "content-length");
    let h: Vec<_> = h
        .into_iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case("content-length"))
        .collect();
    let bytes = raw(ctx, "HEAD", &h, &[], b"");
    on_conn(
        ctx,
        &bytes,
        |c| {
            c.send(&bytes)?;
            let r = c.read_response(true)?;
            let stray = c.stray_bytes(Duration::from_millis(500));
            Ok((r, stray))
        },
        |r, stray| match *stray {
            0 => Res::Pass,
            n => Res::Violation(format!("HTTP {} to HEAD, then {n} body bytes", r.status)),
        },
    )
}

pub(super) fn slow_client(ctx: &mut Ctx, _era: Era) -> Res {
    if !ctx.count() {
        return Res::Inconclusive(crate::probe::ctx::BUDGET_SPENT.into());
    }
    let mut stalled = match Conn::open(&ctx.target, ctx.cfg.timeout) {
        Ok(c) => c,
        Err(e) => return Res::Inconclusive(e),
    };
    let partial = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nX-Probe: ",
        ctx.target.target, ctx.target.authority
    );
    let _ = stalled.send(partial.as_bytes());
    let (h, body) = parts(ctx);
    let bytes = wire::build("POST", &ctx.target.target, &h, &body);
    let ex = ctx.raw(&bytes);
    drop(stalled);
    let Some(r) = &ex.response else {
        return Res::Violation(format!(
            "while another client stalled mid-head, no answer: {}",
            ex.error.as_deref().unwrap_or("")
        ));
    };
    if r.result().is_some() {
        Res::Pass
    } else {
        Res::Violation(format!(
            "while another client stalled mid-head: {}",
            seen(r)
        ))
    }
}
