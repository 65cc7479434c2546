//! The `https` path of the loop upstream, the one FxTwitter is reached by:
//! [`UpConn`] over rustls against a loopback rustls server with a test
//! certificate (`tests/fixtures/tls/`: self-signed for `localhost`, P-256,
//! valid 100 years; the client trusts it alone; made with `openssl req
//! -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days
//! 36500 -subj "/CN=xmd test upstream" -addext
//! "subjectAltName=DNS:localhost,IP:127.0.0.1"`, then DER and PKCS #8).
//! Any response, in any TLS
//! record sizes, in each framing, ended with `close_notify` or a bare TCP
//! close, is read whole through [`UpConn::read_chunk`] and the response
//! reader, and a client that does not trust the certificate fails at the
//! handshake.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use proptest::prelude::*;

use super::conn::{UpConn, READ_BYTES};
use super::wire;

const CERT: &[u8] = include_bytes!("../../../tests/fixtures/tls/cert.der");
const KEY: &[u8] = include_bytes!("../../../tests/fixtures/tls/key.der");

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(trusted: bool) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    if trusted {
        roots
            .add(rustls::pki_types::CertificateDer::from(CERT.to_vec()))
            .unwrap();
    }
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

fn server_config() -> Arc<rustls::ServerConfig> {
    let key = rustls::pki_types::PrivateKeyDer::try_from(KEY.to_vec()).unwrap();
    Arc::new(
        rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![CERT.to_vec().into()], key)
            .unwrap(),
    )
}

/// Serves one request over TLS: reads its head, writes `response` in
/// `pieces` (each written and flushed: one TLS record or more), then
/// sends `close_notify` or not, and closes.
fn serve(response: Vec<u8>, pieces: Vec<usize>, notify: bool) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((tcp, _)) = l.accept() else { return };
        let conn = rustls::ServerConnection::new(server_config()).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut head = Vec::new();
        let mut b = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&b[..n]),
            }
        }
        let mut at = 0;
        for p in pieces.iter().cycle() {
            if at >= response.len() {
                break;
            }
            let end = (at + p).min(response.len());
            if tls
                .write_all(&response[at..end])
                .and_then(|()| tls.flush())
                .is_err()
            {
                return;
            }
            at = end;
        }
        if notify {
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    addr
}

/// `GET /` over TLS to `addr` as the loop makes it: the status and body,
/// or the failure's words.
fn fetch(addr: SocketAddr, trusted: bool) -> Result<(u16, Vec<u8>), String> {
    let mut poll = Poll::new().unwrap();
    let mut c = UpConn::connect(addr, Some(("localhost", client_config(trusted))))
        .map_err(|e| e.to_string())?;
    poll.registry()
        .register(
            &mut c.stream,
            Token(0),
            Interest::READABLE | Interest::WRITABLE,
        )
        .unwrap();
    let (request, mut reader) =
        wire::get("http://localhost/", 4 << 20).map_err(|e| e.to_string())?;
    c.send(&request);
    let mut scratch = vec![0u8; READ_BYTES];
    let mut pending: Vec<u8> = Vec::new();
    let mut events = Events::with_capacity(8);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        c.flush().map_err(|e| e.to_string())?;
        loop {
            let n = c.read_chunk(&mut scratch).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            pending.extend_from_slice(&scratch[..n]);
            let used = reader.feed(&pending).map_err(|e| e.to_string())?;
            pending.drain(..used);
        }
        if reader.is_done() {
            break;
        }
        if c.is_eof() {
            reader.eof().map_err(|e| e.to_string())?;
            break;
        }
        if Instant::now() > deadline {
            return Err("no answer in 10 s".into());
        }
        poll.poll(&mut events, Some(Duration::from_millis(50)))
            .unwrap();
    }
    let reply = reader.finish().ok_or("incomplete")?;
    Ok((reply.response.status, reply.response.body.to_vec()))
}

#[derive(Debug, Clone, Copy)]
enum Framing {
    Length,
    Chunked,
    Close,
}

fn response(body: &[u8], framing: Framing) -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n".to_vec();
    match framing {
        Framing::Length => {
            r.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            r.extend_from_slice(body);
        }
        Framing::Chunked => {
            r.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            for c in body.chunks(7000) {
                r.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
                r.extend_from_slice(c);
                r.extend_from_slice(b"\r\n");
            }
            r.extend_from_slice(b"0\r\n\r\n");
        }
        Framing::Close => {
            r.extend_from_slice(b"Connection: close\r\n\r\n");
            r.extend_from_slice(body);
        }
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_response_in_any_records_is_read_whole_over_tls(
        len in prop_oneof![0usize..300, 300usize..120_000],
        framing in prop::sample::select(vec![Framing::Length, Framing::Chunked, Framing::Close]),
        pieces in prop::collection::vec(1usize..20_000, 1..6),
        notify in any::<bool>(),
    ) {
        let body: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        let addr = serve(response(&body, framing), pieces, notify);
        let (status, got) = fetch(addr, true).map_err(TestCaseError::fail)?;
        prop_assert_eq!(status, 200);
        prop_assert_eq!(got.len(), body.len());
        prop_assert!(got == body, "the body differs");
    }
}

#[test]
fn an_untrusted_certificate_fails_at_the_handshake() {
    let addr = serve(response(b"{}", Framing::Length), vec![100], true);
    let err = fetch(addr, false).unwrap_err();
    assert!(err.starts_with("tls: "), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
}
