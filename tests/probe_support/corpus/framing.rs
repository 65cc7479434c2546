//! FRAME mutants: HTTP/1.1 framing, at the raw-byte level.

use super::*;
use crate::probe_support::{Mutant, Raw, Req, Resp, State};

/// Adds this part's mutants.
pub fn add(v: &mut Vec<Mutant>) {
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = String::from_utf8_lossy(head_of(b));
            (h.matches("Content-Length:").count() == 2)
                .then(|| {
                    let i = h.rfind("Content-Length: 3\r\n")?;
                    let mut o = b.to_vec();
                    o.drain(i..i + 19);
                    Some(Raw::Rewrite(o))
                })
                .flatten()
        }),
        ..m("duplicate Content-Length accepted", &["FRAME-01"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = String::from_utf8_lossy(head_of(b)).into_owned();
            let i = h.find("x\r\n")?;
            h[..i].ends_with(|c: char| c.is_ascii_digit()).then(|| {
                let mut o = b.to_vec();
                o.remove(i);
                Raw::Rewrite(o)
            })
        }),
        ..m("Content-Length 123x read as 123", &["FRAME-02"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = head_of(b);
            let i = h.windows(3).position(|w| w == b"e :")?;
            let mut o = b.to_vec();
            o.remove(i + 1);
            Some(Raw::Rewrite(o))
        }),
        ..m("space before colon accepted", &["FRAME-03"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(head_of(b), b"\r\n b\r\n").then(|| Raw::Answer(Resp::new(500, None, b"")))
        }),
        ..m("obs-fold 500", &["FRAME-04"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = String::from_utf8_lossy(head_of(b)).to_ascii_lowercase();
            (!h.contains("\r\nhost:") && h.starts_with("post")).then(|| {
                let i = b.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
                let mut o = b.to_vec();
                o.splice(i..i, b"Host: 127.0.0.1\r\n".iter().copied());
                Raw::Rewrite(o)
            })
        }),
        ..m("missing Host accepted", &["FRAME-05"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let pat: &[u8] = b"Host: other.example\r\n";
            let i = head_of(b).windows(pat.len()).position(|w| w == pat)?;
            let mut o = b.to_vec();
            o.drain(i..i + pat.len());
            Some(Raw::Rewrite(o))
        }),
        ..m("two Hosts accepted", &["FRAME-06"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let pat: &[u8] = b"bad host/x";
            let i = head_of(b).windows(pat.len()).position(|w| w == pat)?;
            let mut o = b.to_vec();
            o.splice(i..i + pat.len(), b"127.0.0.1".iter().copied());
            Some(Raw::Rewrite(o))
        }),
        ..m("invalid Host accepted", &["FRAME-07"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            (body_has(head_of(b), b"a\rb") || body_has(head_of(b), b"a\0b"))
                .then(|| Raw::Answer(Resp::new(500, None, b"")))
        }),
        ..m("bare CR 500", &["FRAME-08"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| body_has(b, b"\r\n\r\nzz\r\n").then(|| Raw::Answer(ok_answer()))),
        ..m("bad chunk-size accepted", &["FRAME-09"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(b, b"\r\n\r\n10000000000000000000002\r\n").then(|| Raw::Answer(ok_answer()))
        }),
        ..m("chunk overflow accepted", &["FRAME-10"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(head_of(b), b"Transfer-Encoding: chunked, identity").then(|| {
                let mut r = ok_answer();
                r.close = false;
                Raw::Answer(r)
            })
        }),
        ..m("TE not chunked: 200 (kept open)", &["FRAME-11"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            let h = head_of(b);
            (body_has(h, b"Transfer-Encoding: chunked") && body_has(h, b"Content-Length"))
                .then(|| {
                    let mut o = b.to_vec();
                    let i = o
                        .windows(28)
                        .position(|w| w == b"\r\nTransfer-Encoding: chunked")?;
                    o.drain(i..i + 28);
                    Some(Raw::Rewrite(o))
                })
                .flatten()
        }),
        ..m("CL+TE: CL honoured, kept open", &["FRAME-12"])
    });
    v.push(Mutant {
        drop_pipelined: true,
        ..m("pipelined request dropped", &["FRAME-13"])
    });
    v.push(Mutant {
        ignore_expect: true,
        ..m("Expect ignored", &["FRAME-14"])
    });
    v.push(Mutant {
        on_response: Some(|_: &Req, p: &mut Resp, _: &State| {
            if p.status == 405 {
                p.set_header("Allow", None);
            }
        }),
        ..m("405 without Allow", &["FRAME-15"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            b.starts_with(b"HEAD ")
                .then(|| Raw::Answer(Resp::new(200, Some("text/plain"), b"body")))
        }),
        ..m("HEAD with a body", &["FRAME-16"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            b.starts_with(b"XMDPROBE ").then(|| {
                let mut r = Resp::new(405, None, b"");
                r.set_header("Allow", Some("GET, POST"));
                Raw::Answer(r)
            })
        }),
        ..m("unknown method 405", &["FRAME-17"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            (head_of(b).len() > 64 * 1024).then(|| Raw::Answer(Resp::new(500, None, b"")))
        }),
        ..m("oversized head 500", &["FRAME-18"])
    });
    v.push(Mutant {
        serialize: true,
        ..m("one connection at a time", &["FRAME-19"])
    });
    v.push(Mutant {
        on_raw: Some(|b: &[u8]| {
            body_has(head_of(b), b"Transfer-Encoding: xmdprobe").then(|| Raw::Answer(ok_answer()))
        }),
        ..m("unknown coding accepted", &["FRAME-20"])
    });
}
