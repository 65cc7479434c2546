//! `xmd client` as a process: every command against a real `xmd serve`
//! (upstream: the loopback fake), stdout JSON, one stderr line, exit codes.

mod common;
mod util;

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Stdio};

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::Xmd;

const ID: &str = "2087208847298015232";
const POST_URL: &str = "https://x.com/demo_author/status/2087208847298015232";
const MARKDOWN: &str = "## Post · 1/1 — Demo Author (@demo_author)\n\nSmall release day: cold starts are 30% faster and there is one fewer \
     config file to maintain. #buildtools\n\nDate: 2026-08-11T16:05:42Z\nSource: <https://x.com/demo_author/status/2087208847298015232>\n";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout not JSON ({e}): {:?}", self.stdout))
    }
    /// Exactly one stderr line, returned.
    fn error_line(&self) -> &str {
        assert_eq!(self.stderr.lines().count(), 1, "stderr: {:?}", self.stderr);
        self.stderr.trim_end()
    }
}

fn client(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xmd"))
        .arg("client")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().expect("exited"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn server() -> (FakeUpstream, Xmd, String) {
    let fake = FakeUpstream::start();
    for kind in ["status", "thread"] {
        fake.on(
            &format!("/2/{kind}/{ID}"),
            Answer::fixture(200, "status-plain.json"),
        );
    }
    let xmd = Xmd::start(&["--upstream", &format!("{}/", fake.base_url())]);
    let url = format!("http://{}/mcp", xmd.addr);
    (fake, xmd, url)
}

#[test]
fn success_commands_exit_0_with_json() {
    let (_f, _x, url) = server();
    for era in ["auto", "modern", "legacy"] {
        let base = ["--url", url.as_str(), "--era", era];
        let run = |extra: &[&str]| {
            let mut a = base.to_vec();
            a.extend_from_slice(extra);
            let r = client(&a, "");
            assert_eq!(r.code, 0, "{era} {extra:?}: {}", r.stderr);
            assert_eq!(r.stderr, "", "{era} {extra:?}");
            r
        };
        let tools = run(&["tools"]).json();
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names[0], "x_md_get_post");
        assert_eq!(names, xmd::x::tools::TOOL_NAMES);

        let text = run(&[
            "call",
            "x_md_get_post",
            &format!("url={POST_URL}"),
            "thread=off",
            "--text",
        ]);
        assert_eq!(text.stdout, MARKDOWN);

        let r = run(&[
            "call",
            "x_md_get_post",
            &format!(r#"{{"url":"{POST_URL}","thread":"off"}}"#),
        ])
        .json();
        assert_eq!(r["isError"], false);
        assert_eq!(r["content"][0]["type"], "text");
        assert_eq!(r["structuredContent"].get("markdown"), None);

        assert_eq!(run(&["ping"]).json(), json!({}));
        let init = run(&["initialize"]).json();
        assert_eq!(
            init["era"],
            if era == "legacy" { "legacy" } else { "modern" }
        );
        assert_eq!(init["serverInfo"]["name"], "xmd");
        assert_eq!(run(&["discover"]).json()["resultType"], "complete");
        let res = run(&["resources"]).json();
        let first = res["resources"][0]["uri"].as_str().unwrap().to_string();
        assert!(first.ends_with("/llms.txt"), "{first}");
        let read = run(&["read", &first]).json();
        assert_eq!(read["contents"][0]["uri"], first.as_str());
        let text = run(&["read", &first, "--text"]).stdout;
        assert_eq!(
            text.trim_end(),
            read["contents"][0]["text"].as_str().unwrap().trim_end()
        );
        assert_eq!(run(&["templates"]).json(), json!({"resourceTemplates": []}));
        let raw = run(&["rpc", "tools/list"]).json();
        assert_eq!(
            raw["tools"].as_array().unwrap().len(),
            xmd::x::tools::TOOL_NAMES.len()
        );
        let raw = run(&["rpc", "resources/read", &format!(r#"{{"uri":"{first}"}}"#)]).json();
        assert_eq!(raw["contents"][0]["uri"], first.as_str());
    }
}

/// `key=value` is typed by the tool's inputSchema (issue 17): the line
/// from the issue, which sent strings and got -32602, now works.
#[test]
fn key_value_arguments_are_typed_by_the_input_schema() {
    let fake = FakeUpstream::start();
    common::timeline::serve_profile_timeline(&fake);
    let xmd = Xmd::start(&["--upstream", &fake.base_url()]);
    let url = format!("http://{}/mcp", xmd.addr);
    for era in ["modern", "legacy"] {
        let r = client(
            &[
                "--url",
                &url,
                "--era",
                era,
                "call",
                "x_md_get_profile",
                "handle=demo_author",
                "limit=3",
                "full=true",
            ],
            "",
        );
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        let v = r.json();
        assert_eq!(v["isError"], false, "{v}");
        assert_eq!(v["structuredContent"]["limit"], 3);
        assert_eq!(v["structuredContent"]["posts"].as_array().unwrap().len(), 3);
    }
    // A value that fits no type of the property: a usage error, no call.
    let r = client(
        &[
            "--url",
            &url,
            "call",
            "x_md_get_profile",
            "handle=demo_author",
            "limit=three",
        ],
        "",
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.error_line(),
        "xmd client: argument 'limit=three': the tool's inputSchema wants integer (write limit:=JSON to send a value as written)"
    );
    // A string property keeps its text, even when it looks like a number.
    let r = client(
        &[
            "--url",
            &url,
            "call",
            "x_md_get_profile",
            "handle=123",
            "limit:=1",
        ],
        "",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.json()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("@123"),
        "{}",
        r.stdout
    );
}

#[test]
fn arguments_from_stdin() {
    let (_f, _x, url) = server();
    let r = client(
        &["--url", &url, "call", "x_md_get_post", "-", "--text"],
        &format!(r#"{{"url":"{POST_URL}","thread":"off"}}"#),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, MARKDOWN));
}

#[test]
fn tool_error_exits_1_and_still_prints_the_result() {
    let (_f, _x, url) = server();
    // Unscripted on the fake upstream: FxTwitter 404 → an isError result.
    let r = client(
        &[
            "--url",
            &url,
            "call",
            "x_md_get_post",
            "url=https://x.com/a/status/1800000000000000009",
            "thread=off",
        ],
        "",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["isError"], true);
    let text = v["content"][0]["text"].as_str().unwrap();
    let line = r.error_line();
    assert!(
        line.starts_with("xmd client: tool x_md_get_post returned isError: "),
        "{line}"
    );
    assert!(
        line.ends_with(text.lines().next().unwrap().trim()),
        "{line} vs {text}"
    );
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["frob"],
        vec![],
        vec!["--era", "later", "tools"],
        vec!["call", "t", "broken"],
        vec!["--timeout", "-1", "tools"],
    ] {
        let r = client(&args, "");
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stdout, "");
        assert!(r.stderr.starts_with("xmd client: "), "{}", r.stderr);
        assert!(r.stderr.ends_with("Try 'xmd client --help'.\n"));
    }
    assert_eq!(
        client(&["frob"], "").stderr,
        "xmd client: unknown command 'frob'\nTry 'xmd client --help'.\n"
    );
}

#[test]
fn help_exits_0() {
    let r = client(&["--help"], "");
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, xmd::client::cli::help());
    assert_eq!(r.stderr, "");
}

#[test]
fn jsonrpc_errors_exit_3_with_the_error_on_stdout() {
    let (_f, _x, url) = server();
    for era in ["modern", "legacy"] {
        let r = client(&["--url", &url, "--era", era, "call", "nope"], "");
        assert_eq!(r.code, 3);
        assert_eq!(r.json()["error"]["code"], -32602);
        assert_eq!(r.json()["error"]["message"], "Unknown tool: nope");
        assert!(r.error_line().starts_with(
            "xmd client: JSON-RPC error -32602: Unknown tool: nope (data: {\"availableTools\":"
        ));
        let r = client(&["--url", &url, "--era", era, "read", "x://missing"], "");
        assert_eq!(r.code, 3);
        assert_eq!(r.json()["error"]["data"], json!({"uri": "x://missing"}));
        let r = client(
            &[
                "--url",
                &url,
                "--era",
                era,
                "--protocol-version",
                "2099-01-01",
                "tools",
            ],
            "",
        );
        if era == "modern" {
            assert_eq!(r.code, 3);
            assert_eq!(r.json()["error"]["code"], -32022);
        } else {
            // The handshake counter-offers 2025-11-25, which the pin refuses.
            assert_eq!(r.code, 4);
            assert!(r.error_line().starts_with(
                "xmd client: protocol violation: server chose protocol version 2025-11-25"
            ));
        }
    }
}

#[test]
fn transport_failures_exit_4() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let r = client(
        &["--url", &format!("http://127.0.0.1:{port}/mcp"), "tools"],
        "",
    );
    assert_eq!(r.code, 4);
    assert_eq!(r.stdout, "");
    assert!(
        r.error_line().starts_with("xmd client: cannot connect: "),
        "{}",
        r.stderr
    );

    // A URL that is not the MCP endpoint: xmd answers 404 with a JSON body
    // that is not a JSON-RPC error.
    let (_f, x, _url) = server();
    let r = client(
        &[
            "--url",
            &format!("http://{}/no-such-route", x.addr),
            "--era",
            "legacy",
            "ping",
        ],
        "",
    );
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(
        r.error_line()
            .starts_with("xmd client: HTTP 404: {\"error\":\"not_found\""),
        "{}",
        r.stderr
    );
    // A route that answers an HTTP error status with a JSON-RPC error as
    // its body (405 from /healthz for a POST, id null) is the server
    // answering with a JSON-RPC error: exit 3, as the help says.
    for era in ["legacy", "modern"] {
        let r = client(
            &[
                "--url",
                &format!("http://{}/healthz", x.addr),
                "--era",
                era,
                "tools",
            ],
            "",
        );
        assert_eq!(r.code, 3, "{era}: {}", r.stderr);
        assert_eq!(r.json()["error"]["code"], -32600, "{era}");
    }
}

#[test]
fn verbose_traces_each_exchange() {
    let (_f, _x, url) = server();
    let r = client(&["--url", &url, "-v", "--era", "legacy", "ping"], "");
    assert_eq!(r.code, 0);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[0].starts_with(&format!("xmd client: > POST {url} initialize []")));
    assert!(lines[2].contains("notifications/initialized [MCP-Protocol-Version: 2025-11-25]"));
    assert_eq!(lines[3], "xmd client: < 202");
    assert_eq!(
        lines[4],
        format!("xmd client: > POST {url} ping [MCP-Protocol-Version: 2025-11-25]")
    );
    assert_eq!(lines[5], "xmd client: < 200 text/event-stream");
}

/// The two post lists through `xmd client call` (issue 15 item 6), in
/// both eras: the Markdown of `x_md_get_quotes url=…` byte for byte, a
/// walk of `x_md_get_reposts` by `cursor=` to the end, and an upstream
/// failure as an `isError` result.
#[test]
fn quotes_and_reposts_through_the_client() {
    use common::status_lists::{serve_status_list, LIST_POST, NO_TIMELINE_ID};
    let fake = FakeUpstream::start();
    serve_status_list(&fake, "quotes");
    serve_status_list(&fake, "reposts");
    let xmd = Xmd::start(&["--upstream", &fake.base_url()]);
    let url = format!("http://{}/mcp", xmd.addr);
    let golden = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/render/quotes.md"),
    )
    .unwrap();
    for era in ["modern", "legacy"] {
        let call = |args: &[&str]| {
            let mut a = vec!["--url", url.as_str(), "--era", era, "call"];
            a.extend_from_slice(args);
            client(&a, "")
        };
        let r = call(&["x_md_get_quotes", &format!("url={POST_URL}"), "--text"]);
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        assert_eq!(r.stdout, golden, "{era}");

        let mut users = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..5 {
            let mut args = vec![
                "x_md_get_reposts".to_string(),
                "handle=demo_author".into(),
                format!("id={LIST_POST}"),
                "limit=2".into(),
            ];
            if let Some(c) = &cursor {
                args.push(format!("cursor={c}"));
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = call(&args);
            assert_eq!(r.code, 0, "{era}: {}", r.stderr);
            let v = r.json();
            assert_eq!(v["isError"], false, "{v}");
            let s = &v["structuredContent"];
            users.extend(
                s["users"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| u["screen_name"].as_str().unwrap().to_string()),
            );
            match s.get("next_cursor").and_then(Value::as_str) {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(
            users,
            [
                "repost_fan_a",
                "repost_fan_b",
                "repost_fan_c",
                "repost_fan_d",
                "repost_fan_e"
            ],
            "{era}"
        );

        let r = call(&[
            "x_md_get_reposts",
            "handle=demo_author",
            &format!("id={NO_TIMELINE_ID}"),
        ]);
        assert_eq!(r.code, 1, "a tool error exits 1");
        let v = r.json();
        assert_eq!(v["isError"], true, "{v}");
        assert_eq!(
            v["content"][0]["text"],
            "Post 2086000000000000404 was not found, or X does not list its reposts. (HTTP 404, code not_found)"
        );
    }
}

/// Issue 31 through `xmd client`, in both eras: the profile's media,
/// articles (with its About data), replies and `since` (the upstream's 204
/// as "No new posts since …"), the trends, `lang`; a `since` FxTwitter
/// refuses exits 3 with the `-32602` and the tool's `inputSchema`.
#[test]
fn readers_options_and_trends_through_the_client() {
    use common::readers::{serve_readers, SINCE_NONE, SINCE_SOME, TRANSLATED_ID};
    let fake = FakeUpstream::start();
    serve_readers(&fake);
    let xmd = Xmd::start(&["--upstream", &fake.base_url()]);
    let url = format!("http://{}/mcp", xmd.addr);
    let render = |name: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/render")
                .join(name),
        )
        .unwrap()
    };
    for era in ["modern", "legacy"] {
        let call = |args: &[&str]| {
            let mut a = vec!["--url", url.as_str(), "--era", era, "call"];
            a.extend_from_slice(args);
            client(&a, "")
        };
        for (args, golden) in [
            (
                vec![
                    "x_md_get_profile",
                    "handle=demo_author",
                    "feed=media",
                    "--text",
                ],
                "profile-media.md",
            ),
            (
                vec![
                    "x_md_get_profile",
                    "handle=demo_author",
                    "feed=articles",
                    "full=true",
                    "--text",
                ],
                "profile-articles-full.md",
            ),
            (
                vec![
                    "x_md_get_profile",
                    "handle=demo_author",
                    "with_replies=true",
                    "--text",
                ],
                "profile-replies.md",
            ),
            (vec!["x_md_get_trends", "--text"], "trends.md"),
        ] {
            let r = call(&args);
            assert_eq!(r.code, 0, "{era} {args:?}: {}", r.stderr);
            assert_eq!(r.stdout, render(golden), "{era} {args:?}");
        }
        // `since` typed by the input schema: a number stays a number.
        let since = format!("since={SINCE_SOME}");
        let r = call(&["x_md_get_profile", "handle=demo_author", &since]);
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        let v = r.json();
        let ids: Vec<&str> = v["structuredContent"]["posts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["2087452613208453120", "2087208847298015232"], "{era}");
        let since = format!("since={SINCE_NONE}");
        let r = call(&["x_md_get_profile", "handle=demo_author", &since, "--text"]);
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        assert!(
            r.stdout
                .ends_with("No new posts since 2026-08-13T05:46:40Z.\n"),
            "{era}: {}",
            r.stdout
        );
        let r = call(&[
            "x_md_get_profile",
            "handle=demo_author",
            "since=next tuesday",
        ]);
        assert_eq!(r.code, 3, "{era}: {}", r.stdout);
        let v = r.json();
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`since` must be a Unix time"),
            "{v}"
        );
        assert_eq!(
            v["error"]["data"]["inputSchema"]["properties"]["since"]["type"],
            json!(["number", "string"])
        );
        let id = format!("id={TRANSLATED_ID}");
        let r = call(&[
            "x_md_get_post",
            "handle=demo_author",
            &id,
            "thread=off",
            "lang=en",
            "--text",
        ]);
        assert_eq!(r.code, 0, "{era}: {}", r.stderr);
        assert_eq!(r.stdout, render("post-translated.md") + "\n", "{era}");
    }
}
