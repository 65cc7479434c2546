//! Issue 30 item 8: the hints a misconfigured or misdirected user gets.
//! - `xmd serve` on an unspecified address (0.0.0.0, [::]) without a public
//!   URL warns at start-up and on the landing page;
//! - the container image takes its listen address from `XMD_LISTEN` (an ENV
//!   default, so `-e XMD_LISTEN` wins), and `xmd connect` reads it too;
//! - a refused `Host` names `--public-url`, the setting that admits it;
//! - any request that is not for `/mcp` and is refused names `/mcp`.

mod util;

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::Value;
use util::*;
use xmd::app::landing;
use xmd::app::origin::HOST_REFUSED;
use xmd::connect::{self, CLIENTS};

/// The landing page's notice for `base`, as the page writes it.
fn notice(base: &str) -> String {
    format!(
        "<p class=\"note\" role=\"alert\" id=\"unreachable\"><strong>Not reachable as shown:</strong> {}</p>",
        landing::escape(&landing::unreachable_public_url(base).unwrap())
    )
}

/// Every address form a URL may carry, unspecified or not, and the
/// notice shows for exactly the unspecified ones (`IpAddr::is_unspecified`
/// of the address the URL was written from is the oracle), whatever the
/// port, the path, the scheme or the spelling (`[0:0::0]`).
#[test]
fn the_notice_shows_for_exactly_the_unspecified_address() {
    let cases: Vec<(String, bool)> = vec![
        ("http://0.0.0.0:8080".into(), true),
        ("http://0.0.0.0".into(), true),
        ("https://[::]:443/".into(), true),
        ("http://[0:0::0]:80/base".into(), true),
        ("http://127.0.0.1:8080".into(), false),
        ("http://[::1]:8080".into(), false),
        ("https://xmd.example.com".into(), false),
        ("http://0.0.0.0.example:80".into(), false),
        ("http://10.0.0.0:8080".into(), false),
    ];
    for (base, unspecified) in cases {
        let page = landing::page(&base);
        assert_eq!(page.contains("id=\"unreachable\""), unspecified, "{base}");
        assert_eq!(
            landing::unreachable_public_url(&base).is_some(),
            unspecified,
            "{base}"
        );
        if unspecified {
            assert!(page.contains(&notice(&base)), "{base}");
        }
    }
    let w = landing::unreachable_public_url("http://0.0.0.0:8080").unwrap();
    assert_eq!(
        w,
        "the public URL http://0.0.0.0:8080 names the unspecified address 0.0.0.0, which no client can connect to, and the MCP URL, the snippets and every self link carry it. Set --public-url (XMD_PUBLIC_URL) to the URL clients use, e.g. XMD_PUBLIC_URL=https://xmd.example.com"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Generated addresses (v4 and v6, a quarter of them unspecified) and
    /// ports: the notice iff the address is unspecified.
    #[test]
    fn the_notice_follows_the_address(
        v4 in any::<u32>(), v6 in any::<u128>(), zero in 0u8..4, six in any::<bool>(),
        port in any::<u16>(), https in any::<bool>(),
    ) {
        let ip: IpAddr = match (six, zero == 0) {
            (false, true) => Ipv4Addr::UNSPECIFIED.into(),
            (false, false) => Ipv4Addr::from(v4).into(),
            (true, true) => Ipv6Addr::UNSPECIFIED.into(),
            (true, false) => Ipv6Addr::from(v6).into(),
        };
        let base = format!("{}://{}", if https { "https" } else { "http" }, SocketAddr::new(ip, port));
        prop_assert_eq!(landing::unreachable_public_url(&base).is_some(), ip.is_unspecified(), "{}", base);
        prop_assert_eq!(landing::page(&base).contains("id=\"unreachable\""), ip.is_unspecified(), "{}", base);
    }
}

/// `xmd serve --listen ADDR` plus `args`, with a closed loopback upstream;
/// returns the child and its stderr lines as they come.
fn serve(
    listen: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xmd"));
    cmd.arg("serve");
    if !listen.is_empty() {
        cmd.args(["--listen", listen]);
    }
    cmd.args(["--syndication-url", ""])
        .args(args)
        .env_remove("XMD_PUBLIC_URL")
        .env_remove("XMD_LISTEN")
        .env("XMD_UPSTREAM", "http://127.0.0.1:9")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn xmd");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    (child, rx)
}

/// The address of the "listening on http://ADDR/mcp" start line.
fn listening(line: &str) -> SocketAddr {
    let endpoint = if line.starts_with('{') {
        let v: Value = serde_json::from_str(line).unwrap();
        v["endpoint"].as_str().unwrap().to_string()
    } else {
        line.split("listening on ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap_or_else(|| panic!("no listening line: {line}"))
            .to_string()
    };
    endpoint
        .strip_prefix("http://")
        .and_then(|r| r.strip_suffix("/mcp"))
        .unwrap()
        .parse()
        .unwrap()
}

/// Lines received within `wait`.
fn lines_within(rx: &std::sync::mpsc::Receiver<String>, wait: Duration) -> Vec<String> {
    let end = Instant::now() + wait;
    let mut out = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(l) => out.push(l),
            Err(_) => break,
        }
    }
    out
}

fn get_page(addr: SocketAddr) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    std::io::Write::write_all(
        &mut s,
        format!("GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 200);
    r.text()
}

/// On 0.0.0.0 without a public URL, the line after the start line is the
/// warning (plain and JSON logs), and the page served carries the notice;
/// with `--public-url`, neither.
#[test]
fn serving_every_interface_without_a_public_url_warns() {
    for json in [false, true] {
        let log: &[&str] = if json { &["--log-format", "json"] } else { &[] };
        let (mut child, rx) = serve("0.0.0.0:0", log, &[]);
        let start = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let addr = listening(&start);
        assert!(addr.ip().is_unspecified(), "{start}");
        let base = format!("http://0.0.0.0:{}", addr.port());
        let want = landing::unreachable_public_url(&base).unwrap();
        let warning = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        if json {
            let v: Value = serde_json::from_str(&warning).unwrap();
            assert_eq!(v["event"], "warning", "{warning}");
            assert_eq!(v["message"], want.as_str(), "{warning}");
        } else {
            assert_eq!(warning, format!("xmd: warning: {want}"));
        }
        let page = get_page(SocketAddr::from(([127, 0, 0, 1], addr.port())));
        assert!(page.contains(&notice(&base)), "page lacks the notice");
        let _ = child.kill();
        let _ = child.wait();
    }
    let (mut child, rx) = serve(
        "0.0.0.0:0",
        &["--public-url", "https://xmd.example.com"],
        &[],
    );
    let start = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let addr = listening(&start);
    let later = lines_within(&rx, Duration::from_millis(500));
    assert!(
        !later.iter().any(|l| l.contains("unspecified address")),
        "{later:?}"
    );
    let page = get_page(SocketAddr::from(([127, 0, 0, 1], addr.port())));
    assert!(!page.contains("id=\"unreachable\""));
    let _ = child.kill();
    let _ = child.wait();
}

/// The final stage of deploy/Dockerfile: its `ENV` pairs and `ENTRYPOINT`.
fn image() -> (Vec<(String, String)>, Vec<String>) {
    let text = include_str!("../deploy/Dockerfile");
    let last = text.rsplit("\nFROM ").next().unwrap();
    let mut env = Vec::new();
    let mut entrypoint = Vec::new();
    for line in last.lines() {
        if let Some(rest) = line.strip_prefix("ENV ") {
            for pair in rest.split_whitespace() {
                let (k, v) = pair.split_once('=').expect("ENV KEY=VALUE");
                env.push((k.to_string(), v.to_string()));
            }
        } else if let Some(rest) = line.strip_prefix("ENTRYPOINT ") {
            entrypoint = serde_json::from_str(rest).expect("ENTRYPOINT in exec form");
        }
    }
    (env, entrypoint)
}

/// The image as `docker run -e XMD_LISTEN=...` starts it: its ENTRYPOINT
/// (the binary replaced by this build's) under its ENV plus the `-e`
/// value. The listen address given with `-e` is the one served; the
/// image's default is 0.0.0.0:8080, the port it EXPOSEs.
#[test]
fn the_image_honours_xmd_listen() {
    let (env, entrypoint) = image();
    assert_eq!(entrypoint, ["/xmd", "serve"]);
    assert_eq!(
        env,
        [("XMD_LISTEN".to_string(), "0.0.0.0:8080".to_string())]
    );
    assert!(include_str!("../deploy/Dockerfile").contains("\nEXPOSE 8080\n"));
    let mut pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    pairs.push(("XMD_LISTEN", "127.0.0.1:0"));
    let args: Vec<&str> = entrypoint[2..].iter().map(String::as_str).collect();
    let (mut child, rx) = serve("", &args, &pairs);
    let start = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let addr = listening(&start);
    assert_eq!(addr.ip(), IpAddr::from([127, 0, 0, 1]), "{start}");
    let _ = child.kill();
    let _ = child.wait();
}

fn xmd_connect(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xmd"));
    cmd.arg("connect")
        .args(args)
        .env_remove("XMD_PUBLIC_URL")
        .env_remove("XMD_LISTEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run xmd connect")
}

/// `xmd connect` reads `XMD_LISTEN` after `--url` and `XMD_PUBLIC_URL`;
/// an unspecified address becomes loopback of its family, with a note.
#[test]
fn connect_reads_xmd_listen() {
    let claude = connect::client("claude").unwrap();
    for (listen, url, note) in [
        ("127.0.0.1:9123", "http://127.0.0.1:9123/mcp", false),
        ("10.1.2.3:80", "http://10.1.2.3:80/mcp", false),
        ("[::1]:9124", "http://[::1]:9124/mcp", false),
        ("0.0.0.0:8080", "http://127.0.0.1:8080/mcp", true),
        ("[::]:8081", "http://[::1]:8081/mcp", true),
    ] {
        let o = xmd_connect(&["claude"], &[("XMD_LISTEN", listen)]);
        assert!(o.status.success(), "{listen}");
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            format!("{}\n", connect::snippet(claude, url)),
            "{listen}"
        );
        let err = String::from_utf8(o.stderr).unwrap();
        let shown = url.trim_start_matches("http://").trim_end_matches("/mcp");
        let want_note = format!(
            "xmd connect: note: XMD_LISTEN={} listens on every interface; the snippets name {shown}, which works from this machine only: set XMD_PUBLIC_URL to the URL other machines use\n",
            listen.parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            err,
            if note { want_note } else { String::new() },
            "{listen}"
        );
    }
    // XMD_PUBLIC_URL and --url come first, and then no note is printed.
    let env = [
        ("XMD_LISTEN", "0.0.0.0:8080"),
        ("XMD_PUBLIC_URL", "https://pub.example"),
    ];
    for c in &CLIENTS {
        let o = xmd_connect(&[c.id], &env);
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            format!("{}\n", connect::snippet(c, "https://pub.example/mcp"))
        );
        assert!(o.stderr.is_empty());
    }
    let o = xmd_connect(&["json", "--url", "https://o.example/mcp"], &env[..1]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!(
            "{}\n",
            connect::snippet(connect::client("json").unwrap(), "https://o.example/mcp")
        )
    );
    assert!(o.stderr.is_empty());
    let o = xmd_connect(&["claude"], &[("XMD_LISTEN", "localhost:80")]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "xmd connect: invalid XMD_LISTEN 'localhost:80' (expected IP:PORT, e.g. 127.0.0.1:8080)\nTry 'xmd connect --help'.\n"
    );
}

/// The text a refusal carries: JSON-RPC `error.message`, the 404's
/// `message`, or a problem's `detail`.
fn message(body: &Value) -> String {
    body.pointer("/error/message")
        .or_else(|| body.get("message"))
        .or_else(|| body.get("detail"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no message in {body}"))
        .to_string()
}

/// Host names that are not loopback: the refusal names `--public-url`, and
/// that setting admits the host.
#[test]
fn a_refused_host_names_public_url() {
    let x = Xmd::start(&[]);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(48));
    runner
        .run(
            &(
                "[a-z][a-z0-9-]{0,12}",
                prop_oneof!["com", "example", "internal", "io"],
                proptest::option::of(1u16..),
            ),
            |(label, tld, port)| {
                let host = match port {
                    Some(p) => format!("{label}.{tld}:{p}"),
                    None => format!("{label}.{tld}"),
                };
                let r = roundtrip(
                    &x,
                    format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
                );
                prop_assert_eq!(r.status, 403, "{}", host);
                let m = message(&r.json());
                prop_assert_eq!(&m, &format!("Forbidden: {HOST_REFUSED}"));
                prop_assert!(m.contains("--public-url"));
                Ok(())
            },
        )
        .unwrap();
    drop(x);
    let x = Xmd::start(&["--public-url", "https://admitted.example"]);
    let r = roundtrip(
        &x,
        b"GET /healthz HTTP/1.1\r\nHost: admitted.example\r\n\r\n",
    );
    assert_eq!(r.status, 200);
}

/// Paths every route family has, and generated ones.
fn path_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        prop_oneof![
            Just("/".to_string()),
            Just("/healthz".to_string()),
            Just("/llms.txt".to_string()),
            Just("/llms-full.txt".to_string()),
            Just("/openapi.json".to_string()),
            Just("/index.md".to_string()),
            Just("/server.json".to_string()),
            Just("/mcp/server-card".to_string()),
            Just("/.well-known/mcp/server-card.json".to_string()),
            Just("/metrics".to_string()),
            Just("/search".to_string()),
            Just("/demo_author".to_string()),
            Just("/demo_author/status/2087208847298015232".to_string()),
            Just("/mcpx".to_string()),
            Just("/mcp/x".to_string()),
            Just("/api/mcp".to_string()),
            Just("/sse".to_string()),
        ],
        proptest::collection::vec("[A-Za-z0-9._~-]{1,12}", 1..4)
            .prop_map(|segs| format!("/{}", segs.join("/")))
            .prop_filter("not the MCP endpoint", |p| p != "/mcp"),
    ]
}

/// Any method other than GET, HEAD and OPTIONS on any path but `/mcp`
/// (and any GET of a path that does not exist) is refused with a message
/// that names `/mcp`: a client pointed at the base URL or at a document
/// learns where the endpoint is.
#[test]
fn every_refusal_off_the_endpoint_names_mcp() {
    let x = Xmd::start(&[]);
    let h = x.host();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(160));
    runner
        .run(
            &(path_strategy(), prop_oneof![
                Just("POST"), Just("PUT"), Just("DELETE"), Just("PATCH"), Just("GET")
            ]),
            |(path, method)| {
                let body = if method == "GET" { "" } else { "{}" };
                let r = roundtrip(
                    &x,
                    format!(
                        "{method} {path} HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                );
                if method == "GET" && r.status < 400 {
                    return Ok(());
                }
                if method == "GET" && r.status != 404 {
                    // An X route's own answer (the upstream is closed here).
                    return Ok(());
                }
                prop_assert!(
                    [404, 405].contains(&r.status),
                    "{} {} -> {}",
                    method,
                    path,
                    r.status
                );
                let m = message(&r.json());
                prop_assert!(m.contains("POST") && m.contains("/mcp"), "{} {} -> {}: {}", method, path, r.status, m);
                Ok(())
            },
        )
        .unwrap();
    let r = roundtrip(
        &x,
        format!("POST / HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}").as_bytes(),
    );
    assert_eq!(r.status, 405);
    assert_eq!(
        message(&r.json()),
        format!("Method Not Allowed: {}", xmd::app::READ_ONLY_HINT)
    );
}
