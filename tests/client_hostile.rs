//! Issue 32 item 5: `xmd client` against hostile loopback servers. Endless
//! pages stop at the aggregate byte cap (bounded memory); endless server
//! requests get at most 16 answers; slow resumptions, slow pages and
//! endless streams end within `--timeout` + 1 s (the whole command); a
//! reply nested past 100 levels is refused before it is parsed (generated
//! depths up to 100,000 on a small stack); and no control character of a
//! server's text or error reaches the terminal raw (a proptest over every
//! C0/C1 control and ESC sequences, judged by the bytes printed and by an
//! unescaper written here).

mod client_support;

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use client_support::{legacy_basics, xmd_client, Fake, Reply, Req};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::client::{
    cli, Client, Era, Error, TransportKind, DEFAULT_MAX_LIST_BYTES, MAX_REPLY_DEPTH,
    MAX_REPLY_OBJECTS, MAX_REPLY_VALUES, MAX_SERVER_REQUESTS_ANSWERED,
};

fn modern_result(req: &Req, result: Value) -> Reply {
    let mut result = result;
    result["resultType"] = json!("complete");
    Reply::result(req, result)
}

/// A server whose `tools/list` never ends: every page holds one tool with
/// a `pad`-byte description and a fresh cursor. Records each body's size.
fn endless_pages(pad: usize, delay: Duration) -> (Fake, Arc<Mutex<Vec<usize>>>) {
    let sizes = Arc::new(Mutex::new(Vec::new()));
    let s = sizes.clone();
    let fake = Fake::start(move |req: &Req| {
        thread::sleep(delay);
        let n = s.lock().unwrap().len();
        let reply = modern_result(
            req,
            json!({"tools": [{"name": format!("t{n}"), "description": "d".repeat(pad),
                              "inputSchema": {"type": "object"}}],
                   "nextCursor": format!("c{}", n + 1)}),
        );
        s.lock().unwrap().push(reply.body.len());
        reply
    });
    (fake, sizes)
}

#[test]
fn endless_pages_stop_at_the_aggregate_byte_cap() {
    let (fake, sizes) = endless_pages(200_000, Duration::ZERO);
    let c = Client::new(&fake.url())
        .era(Era::Modern)
        .max_list_bytes(1_000_000);
    let e = c.list_tools().unwrap_err();
    let sizes = sizes.lock().unwrap().clone();
    let total: usize = sizes.iter().sum();
    // The cap is passed on the fifth page (5 × ~200 KB > 1 MB), not before.
    assert_eq!(sizes.len(), 5);
    assert!(total - sizes[4] <= 1_000_000 && total > 1_000_000);
    assert_eq!(
        e,
        Error::Protocol(format!(
            "tools/list: 5 pages hold {total} bytes, more than the limit of 1000000 bytes for one list (--max-list-bytes); stopped"
        ))
    );
}

/// The process: endless 1 MB pages, default cap (8 MiB): exit 4 after 8
/// pages with the limit named, peak RSS bounded (the old client read up
/// to 1000 pages, ~4 GiB measured on a hostile server).
#[test]
fn endless_pages_keep_the_process_memory_bounded() {
    let (fake, sizes) = endless_pages(1 << 20, Duration::ZERO);
    let run = xmd_client(&["--url", &fake.url(), "--era", "modern", "tools"]);
    let pages = sizes.lock().unwrap().len();
    let total: usize = sizes.lock().unwrap().iter().sum();
    assert_eq!(run.code, 4);
    assert_eq!(pages, 8, "8 pages of 1 MiB and a little pass 8 MiB");
    assert_eq!(
        String::from_utf8(run.stderr).unwrap(),
        format!(
            "xmd client: protocol violation: tools/list: 8 pages hold {total} bytes, more than the limit of {DEFAULT_MAX_LIST_BYTES} bytes for one list (--max-list-bytes); stopped\n"
        )
    );
    eprintln!("peak RSS {} KiB", run.peak_rss_kib);
    assert!(
        run.peak_rss_kib < 48 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );
    // A lower cap stops sooner.
    let (fake, sizes) = endless_pages(1 << 20, Duration::ZERO);
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "modern",
        "--max-list-bytes",
        "2000000",
        "tools",
    ]);
    assert_eq!((run.code, sizes.lock().unwrap().len()), (4, 2));
}

/// A tool result whose `structuredContent.x` is `n` copies of `item`.
fn bomb(item: &'static str, n: usize, sse: bool) -> Fake {
    Fake::start(move |req: &Req| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"resultType":"complete","content":[],"structuredContent":{{"x":[{}]}}}}}}"#,
            req.id(),
            vec![item; n].join(",")
        );
        if sse {
            let ev = format!("data: {body}\n\n");
            Reply::sse_stream(move |w: &mut TcpStream| {
                let _ = w.write_all(ev.as_bytes());
            })
        } else {
            Reply::raw(200, "application/json", &body)
        }
    })
}

/// A 14 MB reply of 2,000,000 `{"":0}` took 2.6 GiB to parse (a map node
/// each); 16 MB of `0,` took 400 MiB. Refused before parsing now, with the
/// peak RSS of the process bounded; just under the caps it is read.
#[test]
fn value_and_object_bombs_are_refused_before_parsing() {
    for (item, n, what) in [
        (
            r#"{"":0}"#,
            2_000_000,
            format!("{MAX_REPLY_OBJECTS} JSON objects"),
        ),
        ("0", 7_000_000, format!("{MAX_REPLY_VALUES} JSON values")),
    ] {
        for sse in [false, true] {
            let fake = bomb(item, n, sse);
            let run = xmd_client(&["--url", &fake.url(), "--era", "modern", "call", "t"]);
            assert_eq!(run.code, 4);
            assert_eq!(
                String::from_utf8(run.stderr).unwrap(),
                format!("xmd client: protocol violation: reply holds more than {what}; refused before parsing\n")
            );
            eprintln!(
                "{item} x {n} (sse {sse}): peak RSS {} KiB",
                run.peak_rss_kib
            );
            assert!(
                run.peak_rss_kib < 96 * 1024,
                "peak RSS {} KiB",
                run.peak_rss_kib
            );
        }
    }
    // Within the caps: read and printed whole. The envelope holds 3
    // objects (the message, result, structuredContent).
    let n = MAX_REPLY_OBJECTS as usize - 3;
    let fake = bomb(r#"{"":0}"#, n, false);
    let run = xmd_client(&["--url", &fake.url(), "--era", "modern", "call", "t"]);
    assert_eq!(run.code, 0, "{}", String::from_utf8_lossy(&run.stderr));
    let v: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(v["structuredContent"]["x"].as_array().unwrap().len(), n);
    eprintln!("{n} objects printed: peak RSS {} KiB", run.peak_rss_kib);
}

/// The items a list keeps count together: pages of 20,000 objects each
/// stop on the third (60,000 > 50,000), however few bytes they take.
#[test]
fn the_pages_of_a_list_share_the_object_cap() {
    let pages = Arc::new(AtomicUsize::new(0));
    let p = pages.clone();
    let fake = Fake::start(move |req: &Req| {
        let n = p.fetch_add(1, Ordering::SeqCst);
        modern_result(
            req,
            json!({"tools": [{"name": format!("t{n}"), "inputSchema": {"type": "object", "x": vec![json!({}); 20_000]}}],
                   "nextCursor": format!("c{}", n + 1)}),
        )
    });
    let e = Client::new(&fake.url())
        .era(Era::Modern)
        .list_tools()
        .unwrap_err();
    assert_eq!(
        e,
        Error::Protocol(format!(
            "tools/list: 3 pages hold more than {MAX_REPLY_OBJECTS} JSON objects; stopped"
        ))
    );
    assert_eq!(pages.load(Ordering::SeqCst), 3);
}

/// A legacy server whose reply to `tools/list` is an SSE stream of `ping`
/// requests without end (one every millisecond), never the response.
/// Counts the answers the client POSTs.
fn ping_flood() -> (Fake, Arc<AtomicUsize>) {
    let answers = Arc::new(AtomicUsize::new(0));
    let a = answers.clone();
    let fake = Fake::start(move |req: &Req| {
        if req.verb == "POST" && req.body.get("result").is_some() {
            a.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(r) = legacy_basics(req, "s-1") {
            return r;
        }
        Reply::sse_stream(|w: &mut TcpStream| {
            for i in 0u64.. {
                let ev = format!(
                    "data: {{\"jsonrpc\":\"2.0\",\"id\":\"srv-{i}\",\"method\":\"ping\"}}\n\n"
                );
                if w.write_all(ev.as_bytes()).is_err() {
                    return;
                }
                thread::sleep(Duration::from_millis(1));
            }
        })
    });
    (fake, answers)
}

#[test]
fn endless_server_requests_get_at_most_16_answers_and_the_deadline_ends_the_call() {
    let (fake, answers) = ping_flood();
    let start = Instant::now();
    let c = Client::new(&fake.url())
        .era(Era::Legacy)
        .deadline(start + Duration::from_secs(2));
    let e = c.list_tools().unwrap_err();
    let elapsed = start.elapsed();
    assert!(
        matches!(
            e,
            Error::Transport {
                kind: TransportKind::Timeout,
                ..
            }
        ),
        "{e}"
    );
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    drop(c);
    assert_eq!(
        answers.load(Ordering::SeqCst),
        MAX_SERVER_REQUESTS_ANSWERED as usize
    );
}

#[test]
fn the_command_ends_within_its_timeout_against_a_request_flood() {
    let (fake, answers) = ping_flood();
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "legacy",
        "--timeout",
        "2",
        "tools",
    ]);
    assert_eq!(run.code, 4);
    assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    let err = String::from_utf8(run.stderr).unwrap();
    assert!(
        err.starts_with("xmd client: timed out: ")
            && err.ends_with(" (--timeout bounds the whole command)\n"),
        "{err}"
    );
    assert_eq!(answers.load(Ordering::SeqCst), 16);
}

/// A stream that announces an event id and a 10 s `retry`, then closes,
/// every time (the POST's stream and each resumption): the old client
/// waited 5 × 10 s on top of its per-exchange timeout.
#[test]
fn slow_resumptions_end_within_the_timeout() {
    let fake = Fake::start(|req: &Req| {
        if let Some(r) = legacy_basics(req, "s-1") {
            return r;
        }
        Reply::sse_stream(|w: &mut TcpStream| {
            let _ = w.write_all(b"id: 1\nretry: 10000\ndata:\n\n");
        })
    });
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "legacy",
        "--timeout",
        "1.5",
        "tools",
    ]);
    assert_eq!(run.code, 4);
    assert!(
        run.elapsed < Duration::from_millis(2500),
        "{:?}",
        run.elapsed
    );
    assert_eq!(
        String::from_utf8(run.stderr).unwrap(),
        "xmd client: timed out: the deadline passed while waiting to resume the SSE stream (--timeout bounds the whole command)\n"
    );
}

/// The deadline, not the per-exchange timeout, bounds a resumption wait:
/// a 500 ms `retry` with 300 ms exchanges and a far deadline resumes.
#[test]
fn a_resumption_wait_longer_than_one_exchange_timeout_still_resumes() {
    let id = Arc::new(Mutex::new(Value::Null));
    let i = id.clone();
    let fake = Fake::start(move |req: &Req| {
        if req.verb == "POST" {
            *i.lock().unwrap() = req.id();
            return Reply::sse_stream(|w: &mut TcpStream| {
                let _ = w.write_all(b"id: 1\nretry: 500\ndata:\n\n");
            });
        }
        assert_eq!(req.header("Last-Event-ID"), Some("1"));
        let ev = format!(
            "id: 2\ndata: {}\n\n",
            json!({"jsonrpc": "2.0", "id": *i.lock().unwrap(), "result": {"resultType": "complete", "ok": 1}})
        );
        Reply::sse_stream(move |w: &mut TcpStream| {
            let _ = w.write_all(ev.as_bytes());
        })
    });
    let start = Instant::now();
    let c = Client::new(&fake.url())
        .era(Era::Modern)
        .timeout(Duration::from_millis(300))
        .deadline(start + Duration::from_secs(10));
    assert_eq!(c.rpc("x/y", Value::Null).unwrap()["ok"], 1);
    assert!(start.elapsed() >= Duration::from_millis(500));
    assert_eq!(fake.labels(), ["POST /mcp x/y", "GET /mcp"]);
}

/// Pages that each take 400 ms, without end: one exchange never times out,
/// the command does.
#[test]
fn slow_endless_pages_end_within_the_timeout() {
    let (fake, sizes) = endless_pages(10, Duration::from_millis(400));
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "modern",
        "--timeout",
        "2",
        "tools",
    ]);
    assert_eq!(run.code, 4);
    assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    assert!(sizes.lock().unwrap().len() <= 6);
    let err = String::from_utf8(run.stderr).unwrap();
    assert!(err.starts_with("xmd client: timed out: "), "{err}");
}

/// A server that drips one byte of its reply every 100 ms, for ever.
#[test]
fn a_drip_fed_reply_ends_within_the_timeout() {
    let fake = Fake::start(|_req: &Req| {
        Reply::sse_stream(|w: &mut TcpStream| loop {
            if w.write_all(b":").is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(100));
        })
    });
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "modern",
        "--timeout",
        "1",
        "discover",
    ]);
    assert_eq!(run.code, 4);
    assert!(run.elapsed < Duration::from_secs(2), "{:?}", run.elapsed);
}

// ---- escape sequences ----------------------------------------------------

/// The oracle's own reading of the client's escapes: `\u{HEX}` is that
/// code point, anything else is itself.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("\\u{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 3..];
        let close = after.find('}').expect("closed escape");
        let cp = u32::from_str_radix(&after[..close], 16).expect("hex escape");
        out.push(char::from_u32(cp).expect("a code point"));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The stderr line's form of a server string: whitespace runs as one
/// space, cut to `max` characters with `…` (the client's documented
/// display form, `DISPLAY_DETAIL_CHARS` for details, 500 for messages).
fn one_line(s: &str, max: usize) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > max {
        format!("{}…", joined.chars().take(max).collect::<String>())
    } else {
        joined
    }
}

/// No character of general category Cc but `\n` and `\t` (C0, DEL, C1),
/// none with Unicode's Bidi_Control property (UAX #9: the Trojan Source
/// set, CVE-2021-42574), no U+FEFF, ZERO WIDTH SPACE or tag character:
/// judged by the regex crate's Unicode tables, not by the client's list.
fn terminal_safe(s: &str) -> bool {
    static UNSAFE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = UNSAFE.get_or_init(|| {
        regex::Regex::new(r"[[\p{Cc}\p{Bidi_Control}\x{FEFF}\x{200B}\x{E0000}-\x{E007F}]--[\n\t]]")
            .unwrap()
    });
    !re.is_match(s)
}

/// A tool server: `echo` returns `arguments.s` as its text, `fail` is
/// isError with it, `rpc-error` a JSON-RPC error whose message is it.
fn echo_server() -> Fake {
    Fake::start(|req: &Req| {
        let s = req.body["params"]["arguments"]["s"].clone();
        match req.body["params"]["name"].as_str() {
            Some("echo") => modern_result(req, json!({"content": [{"type": "text", "text": s}]})),
            Some("fail") => modern_result(
                req,
                json!({"content": [{"type": "text", "text": s}], "isError": true}),
            ),
            _ => Reply::error(req, -32000, s.as_str().unwrap_or("")),
        }
    })
}

const ATTACKS: &[&str] = &[
    "\u{1b}]0;pwned title\u{7}",                 // window title (OSC 0)
    "\u{1b}[2J\u{1b}[H",                         // clear screen, cursor home
    "\u{1b}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u{7}", // OSC 52 clipboard write
    "\u{9b}31m",                                 // C1 CSI
    "\u{9d}0;t\u{9c}",                           // C1 OSC … ST
    "ok\rFAKE",                                  // overwrite the line
    "invoice\u{202e}fdp.exe",                    // RLO: shows invoiceexe.pdf
    "\u{2067}if admin\u{2069}\u{feff}\u{200b}",  // isolate, BOM, ZWSP
];

#[test]
fn escape_sequences_never_reach_the_terminal() {
    let fake = echo_server();
    let text: String = ATTACKS.concat();
    let args = json!({ "s": text }).to_string();
    for (tool, code) in [("echo", 0), ("fail", 1), ("rpc-error", 3)] {
        let run = xmd_client(&[
            "--url",
            &fake.url(),
            "--era",
            "modern",
            "--text",
            "call",
            tool,
            &args,
        ]);
        assert_eq!(run.code, code, "{tool}");
        let stdout = String::from_utf8(run.stdout).unwrap();
        let stderr = String::from_utf8(run.stderr).unwrap();
        assert!(terminal_safe(&stdout) && terminal_safe(&stderr), "{tool}");
        match tool {
            "echo" | "fail" => assert_eq!(unescape(&stdout), format!("{text}\n")),
            _ => {
                // A JSON-RPC error prints JSON (C0 escaped as \u001b by
                // JSON, C1 as \u009b by the client): the same value.
                let v: Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(v["error"]["message"], text);
            }
        }
        if tool != "echo" {
            assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
        }
    }
    // The exact line for the JSON-RPC error.
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "modern",
        "call",
        "rpc-error",
        r#"{"s":"\u001b]52;c;eA==\u0007 \u009b2J"}"#,
    ]);
    assert_eq!(
        String::from_utf8(run.stderr).unwrap(),
        "xmd client: JSON-RPC error -32000: \\u{1b}]52;c;eA==\\u{7} \\u{9b}2J\n"
    );
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        stdout.contains(r#""message": "\u001b]52;c;eA==\u0007 \u009b2J""#),
        "{stdout}"
    );
    // --raw prints what the server sent.
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "modern",
        "--text",
        "--raw",
        "call",
        "echo",
        &args,
    ]);
    assert_eq!(String::from_utf8(run.stdout).unwrap(), format!("{text}\n"));
}

/// The bidi controls (Unicode PropList.txt, Bidi_Control: 12 code
/// points), the BOM, the other invisible format characters, and ZWJ/ZWNJ
/// (which stay raw: the oracle allows them, the unescaper reads them back).
const BIDI_AND_INVISIBLE: &[char] = &[
    '\u{61c}',
    '\u{200e}',
    '\u{200f}',
    '\u{202a}',
    '\u{202b}',
    '\u{202c}',
    '\u{202d}',
    '\u{202e}',
    '\u{2066}',
    '\u{2067}',
    '\u{2068}',
    '\u{2069}',
    '\u{feff}',
    '\u{200b}',
    '\u{2060}',
    '\u{2064}',
    '\u{206a}',
    '\u{206f}',
    '\u{fff9}',
    '\u{fffb}',
    '\u{180e}',
    '\u{e0001}',
    '\u{e0041}',
    '\u{e007f}',
    '\u{200c}',
    '\u{200d}',
    '\u{ad}',
];

/// Trojan Source (CVE-2021-42574) samples: an "early return" hidden by an
/// RLO/LRI…PDI pair, a comment that reads as code, a homoglyph-free
/// stretched string.
const TROJAN: &[&str] = &[
    "/*\u{202e} } \u{2066}if (isAdmin)\u{2069} \u{2066} begin admins only */",
    "access_level != \"user\u{202e} \u{2066}// Check if admin\u{2069} \u{2066}\"",
    "\u{2067}\u{202b}evil\u{202c}\u{2069}",
    "x\u{feff}y\u{200b}z\u{e0069}\u{e0067}\u{e006e}",
];

/// Characters that matter to a terminal and to the escape format.
fn hostile_char() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap().to_string()),
        (0x7fu32..0xa0).prop_map(|c| char::from_u32(c).unwrap().to_string()),
        prop::sample::select(vec![
            "\\",
            "u",
            "{",
            "}",
            "\\u{",
            "\\u{1b}",
            "\\u{5c}",
            "\\u{202e}",
            "1b",
            "a",
            " ",
            "\n",
            "\t",
            "é",
            "世",
            "😀",
            "\u{a0}",
            "\u{2028}",
            "\u{202e}",
            "abc",
            "أ",
        ])
        .prop_map(str::to_string),
        prop::sample::select(BIDI_AND_INVISIBLE.to_vec()).prop_map(|c| c.to_string()),
        // Every other format character (Cf) and its neighbours.
        (0x2000u32..0x2070).prop_map(|c| char::from_u32(c).unwrap().to_string()),
        (0xe0000u32..0xe0080).prop_map(|c| char::from_u32(c).unwrap().to_string()),
        prop::sample::select(TROJAN.to_vec()).prop_map(str::to_string),
        prop::sample::select(ATTACKS.to_vec()).prop_map(str::to_string),
        "[ -~]{1,8}",
    ]
}

fn hostile_text() -> impl Strategy<Value = String> {
    prop::collection::vec(hostile_char(), 0..40).prop_map(|v| v.concat())
}

fn invocation(url: &str, extra: &[&str]) -> cli::Invocation {
    let mut args: Vec<String> = ["--url", url, "--era", "modern"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    cli::parse(&args, &mut std::io::empty()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever the server's text, `--text` output and the stderr line hold
    /// no control but `\n` and `\t`, and reading the escapes back gives the
    /// server's text exactly (stdout) or its one-line form (stderr).
    #[test]
    fn server_text_is_terminal_safe_and_reversible(s in hostile_text()) {
        static FAKE: std::sync::OnceLock<Fake> = std::sync::OnceLock::new();
        let fake = FAKE.get_or_init(echo_server);
        let args = json!({ "s": s }).to_string();
        let want_stdout = if s.is_empty() || s.ends_with('\n') { s.clone() } else { format!("{s}\n") };

        let inv = invocation(&fake.url(), &["--text", "call", "echo", &args]);
        let o = cli::run(&cli::client_for(&inv), &inv);
        prop_assert_eq!(o.code, 0);
        prop_assert!(terminal_safe(&o.stdout), "{:?}", o.stdout);
        prop_assert_eq!(unescape(&o.stdout), want_stdout.clone());

        let inv = invocation(&fake.url(), &["--text", "call", "fail", &args]);
        let o = cli::run(&cli::client_for(&inv), &inv);
        prop_assert_eq!(o.code, 1);
        prop_assert!(terminal_safe(&o.stdout));
        prop_assert_eq!(unescape(&o.stdout), want_stdout);
        let line = o.stderr.unwrap();
        prop_assert!(terminal_safe(&line), "{:?}", line);
        let first = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        prop_assert_eq!(unescape(&line), format!("xmd client: tool fail returned isError: {}", one_line(first, 300)));

        let inv = invocation(&fake.url(), &["call", "rpc-error", &args]);
        let o = cli::run(&cli::client_for(&inv), &inv);
        prop_assert_eq!(o.code, 3);
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        prop_assert_eq!(v["error"]["message"].as_str(), Some(s.as_str()));
        prop_assert!(terminal_safe(&o.stdout), "{:?}", o.stdout);
        let line = o.stderr.unwrap();
        prop_assert!(terminal_safe(&line), "{:?}", line);
        prop_assert_eq!(unescape(&line), format!("xmd client: JSON-RPC error -32000: {}", one_line(&s, 500)));
    }
}

proptest! {
    /// The escaping itself over any Unicode text: the same oracle.
    #[test]
    fn escape_controls_is_safe_and_reversible(s in prop_oneof![any::<String>(), hostile_text()]) {
        let e = xmd::client::term::escape_controls(&s);
        prop_assert!(terminal_safe(&e), "{:?}", e);
        prop_assert_eq!(unescape(&e), s);
    }
}

/// `--verbose` lines carry server-chosen names (an SSE event type): they
/// are escaped too.
#[test]
fn verbose_lines_are_escaped() {
    let fake = Fake::start(|req: &Req| {
        let ev = format!(
            "event: \u{1b}]0;owned\u{7}\ndata: x\n\ndata: {}\n\n",
            json!({"jsonrpc": "2.0", "id": req.id(), "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"]}})
        );
        Reply::sse_stream(move |w: &mut TcpStream| {
            let _ = w.write_all(ev.as_bytes());
        })
    });
    let run = xmd_client(&["--url", &fake.url(), "--era", "modern", "-v", "discover"]);
    assert_eq!(run.code, 0);
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert!(terminal_safe(&stderr), "{stderr:?}");
    assert!(
        stderr.contains("xmd client: < SSE event '\\u{1b}]0;owned\\u{7}' skipped\n"),
        "{stderr}"
    );
}

// ---- nesting depth -------------------------------------------------------

/// `depth` levels of arrays and objects, alternating by `pattern`'s bits.
fn nested(depth: usize, pattern: u64) -> String {
    let mut open = String::with_capacity(depth * 6);
    let mut close = String::with_capacity(depth * 2);
    for i in 0..depth {
        if pattern >> (i % 64) & 1 == 1 {
            open.push_str("{\"a\":");
            close.push('}');
        } else {
            open.push('[');
            close.push(']');
        }
    }
    let inner = "\"[{\\\"\"";
    format!("{open}{inner}{}", close.chars().rev().collect::<String>())
}

/// The byte offset of the `n`th `[` or `{` outside strings, if any.
fn nth_open(s: &str, n: usize) -> Option<usize> {
    let (mut seen, mut in_str, mut esc) = (0, false, false);
    for (i, b) in s.bytes().enumerate() {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
        } else if b == b'"' {
            in_str = true;
        } else if b == b'[' || b == b'{' {
            seen += 1;
            if seen == n {
                return Some(i);
            }
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Generated nesting up to 100,000 levels in a reply (JSON body or SSE
    /// event), read on a thread with a 256 KiB stack: within the cap the
    /// value arrives whole; past it a precise error names the cap and the
    /// byte, and nothing recursed that far.
    #[test]
    fn deep_replies_are_refused_before_parsing(
        depth in prop_oneof![1usize..=120, 1usize..=100_000],
        pattern in any::<u64>(),
        sse in any::<bool>(),
    ) {
        let sent = Arc::new(Mutex::new(String::new()));
        let s = sent.clone();
        let value = nested(depth, pattern);
        let fake = Fake::start(move |req: &Req| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"resultType":"complete","x":{value}}}}}"#,
                req.id()
            );
            *s.lock().unwrap() = body.clone();
            if sse {
                let ev = format!("data: {body}\n\n");
                Reply::sse_stream(move |w: &mut TcpStream| { let _ = w.write_all(ev.as_bytes()); })
            } else {
                Reply::raw(200, "application/json", &body)
            }
        });
        let url = fake.url();
        let got = thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let c = Client::new(&url).era(Era::Modern);
                c.rpc("x/deep", Value::Null).map(|r| r["x"].to_string())
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        let body = sent.lock().unwrap().clone();
        // Two levels are the envelope and `result`.
        if depth + 2 <= MAX_REPLY_DEPTH {
            let want: Value = serde_json::from_str(&nested(depth, pattern)).unwrap();
            prop_assert_eq!(got.unwrap(), want.to_string());
        } else {
            let at = nth_open(&body, MAX_REPLY_DEPTH + 1).unwrap();
            prop_assert_eq!(got.unwrap_err(), Error::Protocol(format!(
                "reply nests arrays and objects deeper than 100 levels (at byte {at})"
            )));
        }
    }
}
