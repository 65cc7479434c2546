//! Connection snippets: the one table of "how to point client X at this
//! server", used by the landing page (`GET /`), by `xmd connect`, and by the
//! README, so the three never differ.
//!
//! Every snippet is a template holding [`URL_SLOT`] where the MCP endpoint URL
//! goes; [`snippet`] fills it with the URL escaped for the snippet's
//! [`Format`] (a POSIX shell word, a TOML basic string, or a JSON string).

use std::process::ExitCode;

/// Placeholder for the escaped MCP URL in [`Client::template`].
pub const URL_SLOT: &str = "{URL}";

/// The MCP URL `xmd connect` uses when none of `--url`, `XMD_PUBLIC_URL`
/// and `XMD_LISTEN` is given: the default listen address's endpoint.
pub const DEFAULT_MCP_URL: &str = "http://127.0.0.1:8080/mcp";

/// The language a snippet is written in, which decides how the URL is
/// escaped inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A POSIX shell command line; the URL is one shell word.
    Shell,
    /// A TOML document; the URL is a basic (double-quoted) string.
    Toml,
    /// A JSON document; the URL is a JSON string.
    Json,
}

/// One client and its snippet.
#[derive(Debug, Clone, Copy)]
pub struct Client {
    /// The name `xmd connect` accepts, also the page's anchor (`#claude`).
    pub id: &'static str,
    /// Human name of the client.
    pub name: &'static str,
    /// Where the snippet goes, one short sentence.
    pub hint: &'static str,
    /// The snippet's language.
    pub format: Format,
    /// The snippet with [`URL_SLOT`] for the URL.
    pub template: &'static str,
}

/// Every client, in the order the page and `xmd connect` show them.
///
/// Each snippet follows the format its client documents (tests/connect_formats.rs
/// checks each against a schema transcribed from that page):
/// - Claude Code: `claude mcp add --transport http <name> <url>`, and a
///   project's `.mcp.json` with `mcpServers.<name>.{type: "http", url}`
///   (<https://code.claude.com/docs/en/mcp>);
/// - Codex: `codex mcp add <name> --url <url>` and `[mcp_servers.<name>] url`
///   in `~/.codex/config.toml` (<https://developers.openai.com/codex/mcp>);
/// - Cursor: `mcpServers.<name>.url` in `~/.cursor/mcp.json` (<https://cursor.com/docs/mcp>);
/// - VS Code: a top-level `servers` map with `type: "http"` and `url` in
///   `.vscode/mcp.json` (<https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>);
/// - Windsurf: `mcpServers.<name>.serverUrl` in `~/.codeium/windsurf/mcp_config.json`
///   (<https://docs.windsurf.com/windsurf/cascade/mcp>);
/// - opencode: `mcp.<name>` with `type: "remote"` and `url` in `opencode.json`
///   (<https://opencode.ai/docs/mcp-servers>);
/// - Amp: `amp mcp add <name> <url>` and `amp.mcpServers.<name>.url` in its
///   settings.json (<https://ampcode.com/manual#mcp>).
pub const CLIENTS: [Client; 11] = [
    Client {
        id: "claude",
        name: "Claude Code",
        hint: "Run in a terminal.",
        format: Format::Shell,
        template: "claude mcp add --transport http x-md {URL}",
    },
    Client {
        id: "claude-json",
        name: "Claude Code .mcp.json",
        hint: "Add to a project's .mcp.json (shared with the team).",
        format: Format::Json,
        template: "{\n  \"mcpServers\": {\n    \"x-md\": {\n      \"type\": \"http\",\n      \"url\": {URL}\n    }\n  }\n}",
    },
    Client {
        id: "codex",
        name: "Codex CLI",
        hint: "Run in a terminal.",
        format: Format::Shell,
        template: "codex mcp add x-md --url {URL}",
    },
    Client {
        id: "codex-toml",
        name: "Codex config.toml",
        hint: "Add to ~/.codex/config.toml.",
        format: Format::Toml,
        template: "[mcp_servers.x-md]\nurl = {URL}",
    },
    Client {
        id: "cursor",
        name: "Cursor",
        hint: "Add to ~/.cursor/mcp.json (or a project's .cursor/mcp.json).",
        format: Format::Json,
        template: "{\n  \"mcpServers\": {\n    \"x-md\": {\n      \"url\": {URL}\n    }\n  }\n}",
    },
    Client {
        id: "vscode",
        name: "VS Code",
        hint: "Add to .vscode/mcp.json, or run MCP: Open User Configuration.",
        format: Format::Json,
        template: "{\n  \"servers\": {\n    \"x-md\": {\n      \"type\": \"http\",\n      \"url\": {URL}\n    }\n  }\n}",
    },
    Client {
        id: "windsurf",
        name: "Windsurf",
        hint: "Add to ~/.codeium/windsurf/mcp_config.json.",
        format: Format::Json,
        template: "{\n  \"mcpServers\": {\n    \"x-md\": {\n      \"serverUrl\": {URL}\n    }\n  }\n}",
    },
    Client {
        id: "opencode",
        name: "opencode",
        hint: "Merge into opencode.json.",
        format: Format::Json,
        template: "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\n    \"x-md\": {\n      \"type\": \"remote\",\n      \"url\": {URL}\n    }\n  }\n}",
    },
    Client {
        id: "amp",
        name: "Amp CLI",
        hint: "Run in a terminal.",
        format: Format::Shell,
        template: "amp mcp add x-md {URL}",
    },
    Client {
        id: "amp-json",
        name: "Amp settings",
        hint: "Merge into Amp's settings.json.",
        format: Format::Json,
        template: "{\n  \"amp.mcpServers\": {\n    \"x-md\": {\n      \"url\": {URL}\n    }\n  }\n}",
    },
    Client {
        id: "json",
        name: "mcpServers JSON",
        hint: "For other clients that read an mcpServers map with a url.",
        format: Format::Json,
        template: "{\n  \"mcpServers\": {\n    \"x-md\": {\n      \"url\": {URL}\n    }\n  }\n}",
    },
];

/// The client with this id.
pub fn client(id: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|c| c.id == id)
}

/// Other names people type for a client (`xmd connect claude-code`),
/// matched like ids: the product's full name or spelling, never a new
/// snippet.
const ALIASES: [(&str, &str); 5] = [
    ("claude-code", "claude"),
    ("vs-code", "vscode"),
    ("codex-cli", "codex"),
    ("ampcode", "amp"),
    ("amp-cli", "amp"),
];

/// The client a name typed on the command line names: an id or an alias,
/// ignoring ASCII case and reading `_` and spaces as `-` (`VSCode`,
/// `Claude_Code`).
pub fn client_named(name: &str) -> Option<&'static Client> {
    let folded: String = name
        .trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    let id = ALIASES
        .iter()
        .find(|(alias, _)| *alias == folded)
        .map_or(folded.as_str(), |(_, id)| id);
    client(id)
}

/// The MCP endpoint URL for a public base URL (`https://h` → `https://h/mcp`).
pub fn mcp_url(public_url: &str) -> String {
    format!("{}/mcp", public_url.trim_end_matches('/'))
}

/// The client's snippet with `url` filled in, escaped for its format.
pub fn snippet(client: &Client, url: &str) -> String {
    let quoted = match client.format {
        Format::Shell => shell_word(url),
        Format::Toml => toml_string(url),
        Format::Json => json_string(url),
    };
    client.template.replace(URL_SLOT, &quoted)
}

/// A `curl` line that lists the tools, as a connected agent would see them.
pub fn curl_tools_list(url: &str) -> String {
    format!(
        "curl -sS -X POST {} \\\n  -H 'Content-Type: application/json' \\\n  -H 'Accept: application/json, text/event-stream' \\\n  -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{}}}}'",
        shell_word(url)
    )
}

/// `s` as one POSIX shell word: bare when every byte is plainly safe (so an
/// ordinary URL reads exactly as in the docs), otherwise single-quoted with
/// each `'` written as `'\''`.
pub fn shell_word(s: &str) -> String {
    let bare = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~:/%+,=@".contains(&b));
    if bare {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `s` as a TOML basic string (TOML 1.0 §String): `"` and `\` escaped,
/// control characters as `\b \t \n \f \r` or `\uXXXX`.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` as a JSON string (RFC 8259 §7).
pub fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// The `xmd connect --help` text.
pub fn help() -> String {
    let mut out = String::from(
        "Print the snippet that connects an MCP client to this server.\n\n\
         Usage:\n  xmd connect [CLIENT] [--url URL]\n\n\
         With no CLIENT, prints every snippet, each under a '# CLIENT' comment line,\n\
         then a curl line that lists the tools.\n\n\
         Options:\n  \
         --url URL     the MCP endpoint URL to put in the snippets, used as given\n                \
         [default: $XMD_PUBLIC_URL/mcp, else http://$XMD_LISTEN/mcp (an\n                \
         unspecified address such as 0.0.0.0 read as loopback), else ",
    );
    out.push_str(DEFAULT_MCP_URL);
    out.push_str("]\n  -h, --help    print this help\n\nClients:\n");
    for c in &CLIENTS {
        out.push_str(&format!("  {:<12}{}: {}\n", c.id, c.name, c.hint));
    }
    out.push_str("CLIENT ignores case and reads '_' as '-'; also accepted:");
    for (alias, id) in ALIASES {
        out.push_str(&format!(" {alias} ({id})"));
    }
    out.push_str(".\n\nExit codes: 0 printed, 2 usage error (unknown client or option).\n");
    out
}

/// What `xmd connect` was asked to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// Print the help text.
    Help,
    /// Print one client's snippet (`Some`) or all of them, for this URL.
    Print {
        /// The client id, `None` for all.
        client: Option<&'static str>,
        /// The MCP endpoint URL.
        url: String,
    },
}

/// Parses the arguments after `connect`; `public_url` is the
/// `XMD_PUBLIC_URL` value, if set.
///
/// # Errors
/// A usage error message: unknown client or option, a missing or invalid
/// `--url`, or a second client.
pub fn parse(args: &[String], public_url: Option<&str>) -> Result<Request, String> {
    parse_with_listen(args, public_url, None)
}

/// [`parse`], with the `XMD_LISTEN` value too: without `--url` and
/// `XMD_PUBLIC_URL`, the snippets name `http://<listen>/mcp`, as `xmd
/// serve` reads the same variable. An unspecified address (`0.0.0.0`,
/// `[::]`: every interface) becomes the loopback address of its family,
/// which reaches that server from this machine ([`listen_note`] says so).
///
/// # Errors
/// Those of [`parse`], and an `XMD_LISTEN` that is not `IP:PORT`.
pub fn parse_with_listen(
    args: &[String],
    public_url: Option<&str>,
    listen: Option<&str>,
) -> Result<Request, String> {
    let mut client_id = None;
    let mut url = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "-h" || arg == "--help" {
            return Ok(Request::Help);
        } else if let Some(v) = arg.strip_prefix("--url=") {
            url = Some(v.to_string());
        } else if arg == "--url" {
            i += 1;
            url = Some(args.get(i).ok_or("--url needs a value (URL)")?.clone());
        } else if arg.starts_with('-') {
            return Err(format!("unknown option '{arg}'"));
        } else if client_id.is_some() {
            return Err(format!("unexpected argument '{arg}' (one CLIENT at most)"));
        } else {
            let Some(c) = client_named(arg) else {
                return Err(format!("unknown client '{arg}' (known: {})", known()));
            };
            client_id = Some(c.id);
        }
        i += 1;
    }
    let listen = listen.map(str::trim).filter(|l| !l.is_empty());
    let url = match (url, public_url.filter(|u| !u.trim().is_empty()), listen) {
        (Some(u), _, _) => check_url("--url", &u)?,
        (None, Some(base), _) => mcp_url(&check_url("XMD_PUBLIC_URL", base)?),
        (None, None, Some(l)) => format!("http://{}/mcp", reachable(listen_addr(l)?)),
        (None, None, None) => DEFAULT_MCP_URL.to_string(),
    };
    Ok(Request::Print {
        client: client_id,
        url,
    })
}

/// `XMD_LISTEN` as `xmd serve` reads it.
fn listen_addr(value: &str) -> Result<std::net::SocketAddr, String> {
    value.parse().map_err(|_| {
        format!("invalid XMD_LISTEN '{value}' (expected IP:PORT, e.g. 127.0.0.1:8080)")
    })
}

/// A listen address a client on this machine can connect to: an
/// unspecified address becomes the loopback address of its family.
fn reachable(addr: std::net::SocketAddr) -> std::net::SocketAddr {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, addr.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, addr.port()).into(),
        _ => addr,
    }
}

/// The note `xmd connect` prints on stderr when the snippets come from an
/// `XMD_LISTEN` of every interface (no `--url`, no `XMD_PUBLIC_URL`): they
/// name loopback, which works from this machine only.
pub fn listen_note(
    args: &[String],
    public_url: Option<&str>,
    listen: Option<&str>,
) -> Option<String> {
    let given = |v: Option<&str>| v.is_some_and(|v| !v.trim().is_empty());
    if given(public_url) || args.iter().any(|a| a == "--url" || a.starts_with("--url=")) {
        return None;
    }
    let addr = listen_addr(listen?.trim()).ok()?;
    addr.ip().is_unspecified().then(|| {
        format!(
            "XMD_LISTEN={addr} listens on every interface; the snippets name {}, which works from this machine only: set XMD_PUBLIC_URL to the URL other machines use",
            reachable(addr)
        )
    })
}

fn known() -> String {
    CLIENTS.iter().map(|c| c.id).collect::<Vec<_>>().join(", ")
}

fn check_url(name: &str, value: &str) -> Result<String, String> {
    let v = value.trim();
    let ok = (v.starts_with("http://") || v.starts_with("https://"))
        && v.len() > "https://".len()
        && !v.contains(char::is_whitespace);
    if ok {
        Ok(v.to_string())
    } else {
        Err(format!(
            "invalid {name} '{value}' (expected an http:// or https:// URL)"
        ))
    }
}

/// The text `xmd connect` prints for a request to print.
pub fn render(client: Option<&str>, url: &str) -> String {
    if let Some(c) = client.and_then(self::client) {
        return format!("{}\n", snippet(c, url));
    }
    let mut out = String::new();
    for c in &CLIENTS {
        out.push_str(&format!(
            "# {} ({}): {}\n{}\n\n",
            c.id,
            c.name,
            c.hint,
            snippet(c, url)
        ));
    }
    out.push_str(&format!(
        "# Try it without a client: list the tools\n{}\n",
        curl_tools_list(url)
    ));
    out
}

/// `xmd connect [CLIENT] [--url URL]`: prints to stdout and returns the exit
/// code (0, or 2 on a usage error, reported on stderr).
pub fn main(args: &[String]) -> ExitCode {
    let public_url = std::env::var("XMD_PUBLIC_URL").ok();
    let listen = std::env::var("XMD_LISTEN").ok();
    let (public_url, listen) = (public_url.as_deref(), listen.as_deref());
    match parse_with_listen(args, public_url, listen) {
        Ok(Request::Help) => {
            print!("{}", help());
            ExitCode::SUCCESS
        }
        Ok(Request::Print { client, url }) => {
            if let Some(note) = listen_note(args, public_url, listen) {
                eprintln!("xmd connect: note: {note}");
            }
            print!("{}", render(client, &url));
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("xmd connect: {msg}\nTry 'xmd connect --help'.");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_urls_read_exactly_as_in_the_docs() {
        let url = "https://x.pcstyle.dev/mcp";
        let c = |id| snippet(client(id).unwrap(), url);
        assert_eq!(
            c("claude"),
            "claude mcp add --transport http x-md https://x.pcstyle.dev/mcp"
        );
        assert_eq!(
            c("codex-toml"),
            "[mcp_servers.x-md]\nurl = \"https://x.pcstyle.dev/mcp\""
        );
        assert_eq!(
            c("vscode"),
            "{\n  \"servers\": {\n    \"x-md\": {\n      \"type\": \"http\",\n      \"url\": \"https://x.pcstyle.dev/mcp\"\n    }\n  }\n}"
        );
    }

    #[test]
    fn escapers() {
        assert_eq!(shell_word("a'b c"), r"'a'\''b c'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("http://h/a&b"), "'http://h/a&b'");
        assert_eq!(toml_string("a\"b\\c\u{1}"), r#""a\"b\\c\u0001""#);
        assert_eq!(json_string("a\"<b"), r#""a\"<b""#);
    }

    #[test]
    fn parse_defaults_and_errors() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse(&a(&[]), None),
            Ok(Request::Print {
                client: None,
                url: DEFAULT_MCP_URL.into()
            })
        );
        assert_eq!(
            parse(&a(&["amp"]), Some("https://h.example/")),
            Ok(Request::Print {
                client: Some("amp"),
                url: "https://h.example/mcp".into()
            })
        );
        assert_eq!(
            parse(&a(&["--url=https://o/mcp", "json"]), Some("https://h")),
            Ok(Request::Print {
                client: Some("json"),
                url: "https://o/mcp".into()
            })
        );
        assert_eq!(
            parse(&a(&["cursr"]), None),
            Err("unknown client 'cursr' (known: claude, claude-json, codex, codex-toml, cursor, vscode, windsurf, opencode, amp, amp-json, json)".into())
        );
        assert_eq!(
            parse(&a(&["--url"]), None),
            Err("--url needs a value (URL)".into())
        );
        assert_eq!(
            parse(&a(&["--url", "ftp://h"]), None),
            Err("invalid --url 'ftp://h' (expected an http:// or https:// URL)".into())
        );
        assert_eq!(
            parse(&a(&["claude", "codex"]), None),
            Err("unexpected argument 'codex' (one CLIENT at most)".into())
        );
        assert_eq!(parse(&a(&["x", "--help"]), None), Err("unknown client 'x' (known: claude, claude-json, codex, codex-toml, cursor, vscode, windsurf, opencode, amp, amp-json, json)".into()));
        assert_eq!(parse(&a(&["--help"]), None), Ok(Request::Help));
        // Names as people type them: any case, `_` or a space for `-`,
        // and the products' full names.
        for (typed, id) in [
            ("VSCode", "vscode"),
            ("vs-code", "vscode"),
            ("Cursor", "cursor"),
            ("claude-code", "claude"),
            ("Claude_Code", "claude"),
            ("CLAUDE-JSON", "claude-json"),
            ("Codex_TOML", "codex-toml"),
            ("codex-cli", "codex"),
            ("OpenCode", "opencode"),
            ("Windsurf", "windsurf"),
            ("ampcode", "amp"),
            ("Amp JSON", "amp-json"),
        ] {
            assert_eq!(
                parse(&a(&[typed]), None),
                Ok(Request::Print {
                    client: Some(id),
                    url: DEFAULT_MCP_URL.into()
                }),
                "{typed}"
            );
        }
        assert_eq!(
            parse(&a(&["vs code json"]), None),
            Err("unknown client 'vs code json' (known: claude, claude-json, codex, codex-toml, cursor, vscode, windsurf, opencode, amp, amp-json, json)".into())
        );
    }
}
