//! Issue 9: the connect snippets (`xmd::connect`), the landing page on
//! `GET /`, and `xmd connect`. Every snippet must parse back, with a real
//! parser of its format, to exactly the configured URL, however hostile.

mod util;

use std::process::{Command, Output};

use serde_json::{json, Value};
use util::*;
use xmd::app::landing;
use xmd::connect::{self, Format, CLIENTS, DEFAULT_MCP_URL};

/// URLs that need escaping in every format: a quote of each kind, `&`, `<`,
/// a space, a backslash, shell metacharacters and a tab.
const HOSTILE: [&str; 4] = [
    "https://x.pcstyle.dev/mcp",
    "https://h.example/it's&a<b c\"d/mcp",
    "http://127.0.0.1:9/a\\b$(id)`id`!#;|*?~{x}[y]/mcp",
    "https://h.example/'\t'\"\"''/mcp",
];

/// What a client's snippet must mean, as a JSON value (TOML and JSON
/// snippets) or an argv (shell snippets).
fn expected(id: &str, url: &str) -> Value {
    match id {
        "claude" => json!(["claude", "mcp", "add", "--transport", "http", "x-md", url]),
        "codex" => json!(["codex", "mcp", "add", "x-md", "--url", url]),
        "amp" => json!(["amp", "mcp", "add", "x-md", url]),
        "codex-toml" => json!({"mcp_servers": {"x-md": {"url": url}}}),
        "json" => json!({"mcpServers": {"x-md": {"url": url}}}),
        "opencode" => json!({
            "$schema": "https://opencode.ai/config.json",
            "mcp": {"x-md": {"type": "remote", "url": url}}
        }),
        "windsurf" => json!({"mcpServers": {"x-md": {"serverUrl": url}}}),
        "amp-json" => json!({"amp.mcpServers": {"x-md": {"url": url}}}),
        "vscode" => json!({"servers": {"x-md": {"type": "http", "url": url}}}),
        "claude-json" => json!({"mcpServers": {"x-md": {"type": "http", "url": url}}}),
        "cursor" => json!({"mcpServers": {"x-md": {"url": url}}}),
        other => panic!("no expectation for client {other}"),
    }
}

/// Parses a snippet with the real parser of its format.
fn parse_back(format: Format, text: &str) -> Value {
    match format {
        Format::Json => serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}")),
        Format::Toml => {
            let table: toml::Table = toml::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
            serde_json::to_value(table).unwrap()
        }
        Format::Shell => json!(shlex::split(text).unwrap_or_else(|| panic!("shell: {text}"))),
    }
}

#[test]
fn every_snippet_parses_back_to_the_url() {
    let ids: Vec<&str> = CLIENTS.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "claude",
            "claude-json",
            "codex",
            "codex-toml",
            "cursor",
            "vscode",
            "windsurf",
            "opencode",
            "amp",
            "amp-json",
            "json"
        ]
    );
    for url in HOSTILE {
        for c in &CLIENTS {
            let text = connect::snippet(c, url);
            assert_eq!(
                parse_back(c.format, &text),
                expected(c.id, url),
                "{} for {url:?}:\n{text}",
                c.id
            );
        }
    }
}

#[test]
fn curl_line_parses_back_and_posts_tools_list() {
    for url in HOSTILE {
        let line = connect::curl_tools_list(url);
        // A POSIX shell drops backslash-newline before splitting words.
        let argv = shlex::split(&line.replace("\\\n", "")).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        assert_eq!(
            argv,
            [
                "curl",
                "-sS",
                "-X",
                "POST",
                url,
                "-H",
                "Content-Type: application/json",
                "-H",
                "Accept: application/json, text/event-stream",
                "-d",
                body
            ]
        );
    }
}

/// Undoes [`landing::escape`] (and nothing else: the page uses no other
/// entity).
fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The unescaped text of every `<pre><code>` block, in page order.
fn code_blocks(html: &str) -> Vec<String> {
    html.split("<pre><code")
        .skip(1)
        .map(|rest| {
            let start = rest.find('>').unwrap() + 1;
            let end = rest.find("</code></pre>").unwrap();
            unescape(&rest[start..end])
        })
        .collect()
}

#[test]
fn page_shows_the_configured_url_in_every_snippet() {
    for base in [
        "https://x.pcstyle.dev",
        "https://h.example/it's&a<b c\"d",
        "http://127.0.0.1:9/a\\b$(id)`id`!#;|*?~",
    ] {
        let url = format!("{base}/mcp");
        let html = landing::page(base);
        let mut want = vec![url.clone()];
        want.extend(CLIENTS.iter().map(|c| connect::snippet(c, &url)));
        want.push(connect::curl_tools_list(&url));
        assert_eq!(code_blocks(&html), want, "{base}");
        for c in &CLIENTS {
            assert!(html.contains(&format!("<article class=\"client\" id=\"{}\">", c.id)));
            assert!(html.contains(&format!("<a href=\"#{}\">", c.id)));
        }
        for path in [
            "/llms.txt",
            "/llms-full.txt",
            "/openapi.json",
            "/mcp/server-card",
            "/.well-known/ai-catalog.json",
        ] {
            let href = format!("href=\"{}\"", landing::escape(&format!("{base}{path}")));
            assert!(html.contains(&href), "{href}");
        }
        // Nothing hostile leaks into markup unescaped.
        if base.contains('<') {
            assert!(!html.contains("a<b"));
            assert!(!html.contains("c\"d"));
        }
    }
}

#[test]
fn page_is_self_contained_and_names_tools_and_version() {
    let base = "https://h.example";
    let html = landing::page(base);
    assert!(html.starts_with("<!doctype html>\n<html lang=\"en\">"));
    assert!(html.ends_with("</html>\n"));
    for banned in [
        "<link", "<img", "<iframe", "src=", "@import", "url(", "//fonts.",
    ] {
        assert!(!html.contains(banned), "{banned}");
    }
    assert!(html.contains("<meta name=\"viewport\""));
    assert!(html.contains("prefers-color-scheme:dark"));
    assert!(html.contains("default-src 'none'"));
    // Every absolute URL is this server's, but for the opencode $schema,
    // which is part of opencode's own config format.
    let text = unescape(&html);
    for (i, _) in text.match_indices("://") {
        let start = text[..i]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |s| s + 1);
        let rest = &text[start..];
        assert!(
            rest.starts_with(base) || rest.starts_with("https://opencode.ai/config.json\""),
            "foreign URL at {}",
            &rest[..rest.len().min(60)]
        );
    }
    let tools = xmd::x::tools::Tools::definitions();
    let tools = tools.as_array().unwrap();
    assert_eq!(tools.len(), xmd::x::tools::TOOL_NAMES.len());
    for t in tools {
        let line = format!(
            "<li><code>{}</code> <strong>{}</strong>",
            t["name"].as_str().unwrap(),
            landing::escape(t["title"].as_str().unwrap())
        );
        assert!(html.contains(&line), "{line}");
    }
    assert!(html.contains(&format!(
        "<p>xmd {} · MCP revisions 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26</p>",
        env!("CARGO_PKG_VERSION")
    )));
}

#[test]
fn server_routes_the_page_on_slash() {
    // A hostile base is refused at startup (`--public-url` admits
    // letters, digits and -._~%/:@[] only): the page's own escaping of
    // one is `landing::page`'s unit test's.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_xmd"))
        .args(["serve", "--public-url", "https://h.example/x'y&z<w"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let base = "https://h.example/x%27y%26z%3Cw";
    let x = Xmd::start(&["--public-url", base]);
    let h = x.host();
    let get = |target: &str| {
        roundtrip(
            &x,
            format!("GET {target} HTTP/1.1\r\nHost: {h}\r\n\r\n").as_bytes(),
        )
    };
    let want = landing::page(base);
    for target in ["/", "/?utm=1"] {
        let r = get(target);
        assert_eq!(r.status, 200, "{target}");
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(r.text(), want);
    }
    let head = roundtrip(
        &x,
        format!("HEAD / HTTP/1.1\r\nHost: {h}\r\n\r\n").as_bytes(),
    );
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some(want.len().to_string()));
    assert!(head.body.is_empty());
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let r = roundtrip(
            &x,
            format!("{method} / HTTP/1.1\r\nHost: {h}\r\nContent-Length: 0\r\n\r\n").as_bytes(),
        );
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow").as_deref(), Some("GET, HEAD, OPTIONS"));
    }
    let r = roundtrip(
        &x,
        format!("OPTIONS / HTTP/1.1\r\nHost: {h}\r\n\r\n").as_bytes(),
    );
    assert_eq!(r.status, 204);
    assert_eq!(r.header("allow").as_deref(), Some("GET, HEAD, OPTIONS"));
    assert_eq!(get("/index.html").status, 404);
}

fn xmd_connect(args: &[&str], public_url: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xmd"));
    cmd.arg("connect")
        .args(args)
        .env_remove("XMD_PUBLIC_URL")
        .env_remove("XMD_LISTEN");
    if let Some(u) = public_url {
        cmd.env("XMD_PUBLIC_URL", u);
    }
    cmd.output().expect("run xmd connect")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn connect_prints_each_snippet_with_the_chosen_url() {
    let url = "https://h.example/it's&a<b/mcp";
    for c in &CLIENTS {
        let o = xmd_connect(&[c.id, "--url", url], Some("https://ignored.example"));
        assert!(o.status.success());
        assert_eq!(stdout(&o), format!("{}\n", connect::snippet(c, url)));
        assert_eq!(
            parse_back(c.format, stdout(&o).trim_end()),
            expected(c.id, url)
        );
        let o = xmd_connect(&[&format!("--url={url}"), c.id], None);
        assert_eq!(stdout(&o), format!("{}\n", connect::snippet(c, url)));
        let o = xmd_connect(&[c.id], Some("https://pub.example/"));
        assert_eq!(
            stdout(&o),
            format!("{}\n", connect::snippet(c, "https://pub.example/mcp"))
        );
        let o = xmd_connect(&[c.id], None);
        assert_eq!(
            stdout(&o),
            format!("{}\n", connect::snippet(c, DEFAULT_MCP_URL))
        );
    }
}

#[test]
fn connect_without_client_prints_all_then_curl() {
    let o = xmd_connect(&[], Some("https://pub.example"));
    assert!(o.status.success());
    let out = stdout(&o);
    assert_eq!(out, connect::render(None, "https://pub.example/mcp"));
    let mut want = String::new();
    for c in &CLIENTS {
        want.push_str(&format!(
            "# {} ({}): {}\n{}\n\n",
            c.id,
            c.name,
            c.hint,
            connect::snippet(c, "https://pub.example/mcp")
        ));
    }
    want.push_str(
        "# Try it without a client: list the tools\ncurl -sS -X POST https://pub.example/mcp \\\n",
    );
    assert!(out.starts_with(&want), "{out}");
}

#[test]
fn connect_usage_errors_exit_2_and_help_lists_clients() {
    let o = xmd_connect(&["cursr"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "xmd connect: unknown client 'cursr' (known: claude, claude-json, codex, codex-toml, cursor, vscode, windsurf, opencode, amp, amp-json, json)\nTry 'xmd connect --help'.\n"
    );
    let o = xmd_connect(&["--bogus"], None);
    assert_eq!(o.status.code(), Some(2));
    let o = xmd_connect(&[], Some("not a url"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .starts_with("xmd connect: invalid XMD_PUBLIC_URL 'not a url'"));
    let o = xmd_connect(&["--help"], None);
    assert!(o.status.success());
    let help = stdout(&o);
    assert!(help.starts_with("Print the snippet that connects an MCP client to this server.\n"));
    for c in &CLIENTS {
        assert!(
            help.contains(&format!("\n  {:<12}{}: ", c.id, c.name)),
            "{}",
            c.id
        );
    }
}

/// The README and llms.txt quote snippets too; they must be the table's.
#[test]
fn readme_and_llms_txt_quote_the_table() {
    let readme = include_str!("../README.md");
    let claude = connect::client("claude").unwrap();
    let codex = connect::client("codex").unwrap();
    let block = format!(
        "```sh\n{}\n{}\n```",
        connect::snippet(claude, DEFAULT_MCP_URL),
        connect::snippet(codex, DEFAULT_MCP_URL)
    );
    assert!(readme.contains(&block), "README lacks:\n{block}");
    let curl = format!("```sh\n{}\n```", connect::curl_tools_list(DEFAULT_MCP_URL));
    assert!(readme.contains(&curl), "README lacks:\n{curl}");

    let base = "https://h.example";
    let url = format!("{base}/mcp");
    let llms = xmd::docs::render(include_str!("../docs/llms.txt"), base);
    for (label, c) in [("Claude Code", claude), ("Codex", codex)] {
        let line = format!("- {label}: `{}`", connect::snippet(c, &url));
        assert!(llms.contains(&line), "llms.txt lacks {line}");
    }
    let json_line = llms
        .lines()
        .find_map(|l| l.strip_prefix("- Any JSON config: `"))
        .and_then(|l| l.strip_suffix('`'))
        .expect("llms.txt JSON config line");
    let json = connect::client("json").unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(json_line).unwrap(),
        parse_back(Format::Json, &connect::snippet(json, &url))
    );
}
