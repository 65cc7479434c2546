//! Every `xmd connect` snippet is accepted by its client: each is parsed by
//! a real parser of its language (serde_json, toml, shlex) and judged against
//! the format that client's own documentation gives, transcribed below as a
//! JSON Schema (JSON and TOML configs) or an argv grammar (command lines),
//! with the page cited. Proptest drives generated URLs through every
//! snippet: whatever the URL, the parsed snippet is valid for its client and
//! names exactly that URL.

use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::connect::{self, Format, CLIENTS};

/// The server name every snippet registers.
const NAME: &str = "x-md";

/// A remote server entry of `mcpServers`-style maps: `url` (+ `headers`).
fn url_entry(extra_required: &[&str], extra: Value) -> Value {
    let mut props = json!({
        "url": {"type": "string", "minLength": 1},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}}
    });
    for (k, v) in extra.as_object().unwrap() {
        props[k] = v.clone();
    }
    let mut required = vec!["url"];
    required.extend_from_slice(extra_required);
    json!({"type": "object", "required": required, "properties": props, "additionalProperties": false})
}

/// A document holding one map of servers under `key`.
fn servers_doc(key: &str, entry: Value, other_top_level: Value) -> Value {
    let mut props =
        json!({ key: {"type": "object", "minProperties": 1, "additionalProperties": entry} });
    for (k, v) in other_top_level.as_object().unwrap() {
        props[k] = v.clone();
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": [key],
        "properties": props,
        "additionalProperties": false
    })
}

/// The documented format of each JSON/TOML snippet, as a JSON Schema.
fn schema(id: &str) -> Value {
    match id {
        // https://code.visualstudio.com/docs/copilot/reference/mcp-configuration:
        // `.vscode/mcp.json` has a top-level "servers" object (and an optional
        // "inputs" array); an HTTP server has "type": "http" (or "sse") and "url".
        "vscode" => servers_doc(
            "servers",
            url_entry(&["type"], json!({"type": {"enum": ["http", "sse"]}})),
            json!({"inputs": {"type": "array"}}),
        ),
        // https://code.claude.com/docs/en/mcp: a project's `.mcp.json` is
        // {"mcpServers": {"<name>": {"type": "http", "url": "..."}}}.
        "claude-json" => servers_doc(
            "mcpServers",
            url_entry(&["type"], json!({"type": {"enum": ["http", "sse"]}})),
            json!({}),
        ),
        // https://cursor.com/docs/mcp: `~/.cursor/mcp.json` lists servers under
        // "mcpServers"; a remote one has a "url" (and optional "headers").
        "cursor" | "json" => servers_doc("mcpServers", url_entry(&[], json!({})), json!({})),
        // https://docs.windsurf.com/windsurf/cascade/mcp: `mcp_config.json`,
        // "mcpServers", a remote server's address is "serverUrl" (not "url").
        "windsurf" => servers_doc(
            "mcpServers",
            json!({
                "type": "object",
                "required": ["serverUrl"],
                "properties": {
                    "serverUrl": {"type": "string", "minLength": 1},
                    "headers": {"type": "object"}
                },
                "additionalProperties": false
            }),
            json!({}),
        ),
        // https://opencode.ai/docs/mcp-servers (schema https://opencode.ai/config.json):
        // "mcp": {"<name>": {"type": "remote", "url": ..., "enabled"?, "headers"?,
        // "oauth"?, "timeout"?}}; no other field is allowed.
        "opencode" => servers_doc(
            "mcp",
            url_entry(
                &["type"],
                json!({
                    "type": {"const": "remote"},
                    "enabled": {"type": "boolean"},
                    "oauth": {},
                    "timeout": {"type": "integer"}
                }),
            ),
            json!({"$schema": {"const": "https://opencode.ai/config.json"}}),
        ),
        // https://ampcode.com/manual#mcp: settings.json "amp.mcpServers", a
        // remote server has "url" (and optional "headers").
        "amp-json" => servers_doc("amp.mcpServers", url_entry(&[], json!({})), json!({})),
        // https://developers.openai.com/codex/mcp: `[mcp_servers.<name>]` with
        // `url` for a streamable HTTP server (optional bearer_token_env_var,
        // http_headers, enabled, timeouts).
        "codex-toml" => servers_doc(
            "mcp_servers",
            url_entry(
                &[],
                json!({
                    "bearer_token_env_var": {"type": "string"},
                    "http_headers": {"type": "object"},
                    "enabled": {"type": "boolean"},
                    "startup_timeout_sec": {"type": "number"},
                    "tool_timeout_sec": {"type": "number"}
                }),
            ),
            json!({}),
        ),
        other => panic!("no documented format for {other}"),
    }
}

/// The documented command lines, as a check of the argv: `Ok((name, url))`
/// when the words follow the client's usage line.
fn command(id: &str, argv: &[String]) -> Result<(String, String), String> {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    match (id, words.as_slice()) {
        // https://code.claude.com/docs/en/mcp:
        //   claude mcp add --transport http <name> <url>
        ("claude", ["claude", "mcp", "add", "--transport", "http", name, url]) => {
            Ok((name.to_string(), url.to_string()))
        }
        // https://developers.openai.com/codex/mcp: codex mcp add <name> --url <url>
        ("codex", ["codex", "mcp", "add", name, "--url", url]) => {
            Ok((name.to_string(), url.to_string()))
        }
        // https://ampcode.com/manual#mcp: amp mcp add <name> <url>
        ("amp", ["amp", "mcp", "add", name, url]) if !url.starts_with('-') => {
            Ok((name.to_string(), url.to_string()))
        }
        _ => Err(format!("{id}: not the documented usage: {words:?}")),
    }
}

/// Where each format puts the URL of server `NAME`.
fn url_of(id: &str, doc: &Value) -> Value {
    let (map, field) = match id {
        "vscode" => ("servers", "url"),
        "windsurf" => ("mcpServers", "serverUrl"),
        "opencode" => ("mcp", "url"),
        "amp-json" => ("amp.mcpServers", "url"),
        "codex-toml" => ("mcp_servers", "url"),
        _ => ("mcpServers", "url"),
    };
    doc[map][NAME][field].clone()
}

/// Checks one snippet for `url`.
fn check(c: &connect::Client, url: &str) -> Result<(), String> {
    let text = connect::snippet(c, url);
    match c.format {
        Format::Shell => {
            let argv = shlex::split(&text).ok_or_else(|| format!("shell: {text}"))?;
            let (name, got) = command(c.id, &argv)?;
            if (name.as_str(), got.as_str()) != (NAME, url) {
                return Err(format!("{}: {name} {got:?} in {text}", c.id));
            }
        }
        Format::Json | Format::Toml => {
            let doc: Value = if c.format == Format::Json {
                serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?
            } else {
                let t: toml::Table = toml::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
                serde_json::to_value(t).unwrap()
            };
            let s = schema(c.id);
            let v = jsonschema::draft202012::new(&s).expect("schema compiles");
            let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
            if !errors.is_empty() {
                return Err(format!("{}: {errors:?}\n{text}", c.id));
            }
            if url_of(c.id, &doc) != json!(url) {
                return Err(format!("{}: URL not at its documented place\n{text}", c.id));
            }
        }
    }
    Ok(())
}

#[test]
fn every_client_has_a_documented_format() {
    for c in &CLIENTS {
        check(c, "https://x.pcstyle.dev/mcp").unwrap();
    }
    // The formats tell the clients apart: the old VS Code snippet (an
    // mcpServers map) is not VS Code's format, and Cursor's `url` is not
    // Windsurf's `serverUrl`.
    let old_vscode = json!({"mcpServers": {"x-md": {"type": "http", "url": "https://h/mcp"}}});
    let v = jsonschema::draft202012::new(&schema("vscode")).unwrap();
    assert!(!v.is_valid(&old_vscode));
    let cursor_doc = json!({"mcpServers": {"x-md": {"url": "https://h/mcp"}}});
    let w = jsonschema::draft202012::new(&schema("windsurf")).unwrap();
    assert!(!w.is_valid(&cursor_doc));
    assert!(command(
        "claude",
        &["claude", "mcp", "add", "x-md", "https://h/mcp"].map(String::from)
    )
    .is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any URL (quotes, spaces, backslashes, shell and TOML metacharacters,
    /// non-ASCII): every snippet stays in its client's format and names it.
    #[test]
    fn every_snippet_is_valid_for_any_url(path in "[ -~\u{e9}\u{4e2d}\u{1f600}\t]{0,40}", https in any::<bool>()) {
        let url = format!("{}://h.example/{path}", if https { "https" } else { "http" });
        for c in &CLIENTS {
            prop_assert!(check(c, &url).is_ok(), "{:?}", check(c, &url));
        }
    }
}
