//! `xmd client`: the MCP client from a shell. Parses arguments, runs one
//! command, prints JSON on stdout, one error line on stderr, and maps the
//! outcome to an exit code.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::term::{escape_controls, json_without_c1};
use super::{
    Client, Era, Error, TransportKind, DEFAULT_MAX_LIST_BYTES, DEFAULT_TIMEOUT, DEFAULT_URL,
};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the tool ran and returned `isError: true`.
pub const EXIT_TOOL_ERROR: u8 = 1;
/// Exit code: bad command line.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the server answered with a JSON-RPC error, under any HTTP
/// status (a `4xx` whose body is one counts).
pub const EXIT_JSONRPC: u8 = 3;
/// Exit code: transport failure, an HTTP error status without a JSON-RPC
/// error, or protocol violation.
pub const EXIT_FAILURE: u8 = 4;

/// Largest JSON read from stdin for `-` arguments: 16 MiB. More is a usage
/// error ("stdin larger than …").
pub const MAX_STDIN_BYTES: u64 = 16 * 1024 * 1024;

/// The `xmd client --help` text.
pub fn help() -> String {
    format!(
        "xmd client — talk to any MCP server over Streamable HTTP (both protocol eras)\n\n\
Usage:\n  xmd client [OPTIONS] COMMAND [ARGS]\n\n\
Commands:\n\
\x20 discover                    server/discover (2026-07-28 framing) and print the result\n\
\x20 initialize                  settle the era (probe and/or initialize handshake), print what was negotiated\n\
\x20 ping                        liveness: ping (legacy) or a server/discover round trip (2026-07-28)\n\
\x20 tools                       list every tool (follows nextCursor)\n\
\x20 call NAME [ARGS]            call a tool; ARGS is one JSON object, '-' (JSON from stdin),\n\
\x20                             or key=value and key:=JSON pairs; key=value is typed by the tool's\n\
\x20                             inputSchema (integer, number, boolean, array/object as JSON;\n\
\x20                             one tools/list first), key:=JSON is sent as written;\n\
\x20                             no ARGS sends {{}}\n\
\x20 resources                   list every resource (follows nextCursor)\n\
\x20 templates                   list every resource template (follows nextCursor)\n\
\x20 read URI                    read one resource\n\
\x20 rpc METHOD [PARAMS]         any method; PARAMS is a JSON object or '-'; prints the inner result\n\n\
Options (anywhere on the line; '--' ends them):\n\
\x20 --url URL                   MCP endpoint [default: {DEFAULT_URL}]\n\
\x20 --era auto|modern|legacy    auto probes server/discover at 2026-07-28 and falls back to the\n\
\x20                             initialize handshake on a 4xx or JSON-RPC error [default: auto]\n\
\x20 --protocol-version V        pin the revision (no fallback); a date before 2026-07-28 means the\n\
\x20                             handshake era\n\
\x20 --header 'Name: value'      extra request header, repeatable (e.g. Authorization); replaces a\n\
\x20                             header of the same name the client would set\n\
\x20 --timeout SECS              time limit of the whole command: every exchange, redirect, SSE\n\
\x20                             resumption and its wait, new session and page; past it: exit 4\n\
\x20                             [default: {}]\n\
\x20 --max-list-bytes BYTES      most bytes the pages of one list (tools, resources, templates,\n\
\x20                             and the tools/list before a typed call) may hold together; past\n\
\x20                             it: exit 4 naming the page [default: {}]\n\
\x20 --text                      call/read: print only the text content (the Markdown), not JSON\n\
\x20 --raw                       print the server's text and error messages as sent; without it,\n\
\x20                             control characters (C0 but newline and tab, DEL, C1), bidi\n\
\x20                             controls (U+061C, U+200E/F, U+202A-E, U+2066-F) and invisible\n\
\x20                             ones (U+200B, U+2060-4, U+FEFF, U+FFF9-B, U+180E, tags\n\
\x20                             U+E0000-7F) in --text output, on stderr and in --verbose lines\n\
\x20                             are written \\u{{1b}}, and a backslash before 'u{{' as \\u{{5c}}, so\n\
\x20                             no escape sequence or reordered text reaches the terminal (JSON\n\
\x20                             output escapes them as \\u00XX either way)\n\
\x20 -v, --verbose               print each HTTP exchange on stderr (method, headers, status, session)\n\
\x20 -h, --help                  print this help\n\n\
Output: JSON on stdout (a JSON-RPC error prints {{\"error\": …}}); one error line on stderr.\n\
A legacy session (Mcp-Session-Id) is ended with DELETE before exiting (within --timeout); a 404\n\
(or the SDK examples' 400 'No valid session ID provided') to a request with a session starts\n\
one new session and retries once. 307/308 redirects are followed within the same scheme,\n\
host and port, at most {} hops. A server gets at most {} answers to its own requests in\n\
one command (all its pages and exchanges together; later ones go unanswered). A reply\n\
nested deeper than {} levels, or with more than {} JSON values or\n\
{} objects (one reply, or the pages of one list together), is refused before it is\n\
parsed: exit 4.\n\n\
Exit codes:\n\
\x20 0  success\n\
\x20 1  the tool ran and returned isError: true (its result is still printed)\n\
\x20 2  usage error\n\
\x20 3  the server answered with a JSON-RPC error (under any HTTP status: a 4xx whose body is one counts)\n\
\x20 4  transport failure (connect, timeout, TLS), an HTTP error status without a JSON-RPC error, or protocol violation\n\n\
Examples:\n\
\x20 xmd client tools\n\
\x20 xmd client call x_md_get_post url=https://x.com/jack/status/20 --text\n\
\x20 xmd client call x_md_get_post '{{\"url\":\"https://x.com/jack/status/20\",\"thread\":\"off\"}}'\n\
\x20 xmd client call x_md_get_profile handle=jack limit=3 full=true\n\
\x20 xmd client call x_md_get_post url=https://x.com/jack/status/20 max_posts:=5 full:=true\n\
\x20 xmd client --url https://mcp.example.com/mcp --header 'Authorization: Bearer $TOKEN' resources\n",
        DEFAULT_TIMEOUT.as_secs(),
        DEFAULT_MAX_LIST_BYTES,
        super::MAX_REDIRECTS,
        super::MAX_SERVER_REQUESTS_ANSWERED,
        super::MAX_REPLY_DEPTH,
        super::MAX_REPLY_VALUES,
        super::MAX_REPLY_OBJECTS,
    )
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// Endpoint URL.
    pub url: String,
    /// Era choice.
    pub era: Era,
    /// Pinned revision.
    pub pin: Option<String>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Time limit of the whole command.
    pub timeout: Duration,
    /// `--max-list-bytes`.
    pub max_list_bytes: u64,
    /// `--text`.
    pub text: bool,
    /// `--raw`: server text printed as sent.
    pub raw: bool,
    /// `--verbose`.
    pub verbose: bool,
    /// What to do.
    pub command: Command,
}

/// One client command.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `discover`.
    Discover,
    /// `initialize`.
    Initialize,
    /// `ping`.
    Ping,
    /// `tools`.
    Tools,
    /// `call NAME ARGS`.
    Call {
        /// Tool name.
        name: String,
        /// Arguments object (`key=value` values still strings).
        arguments: Value,
        /// Keys given as `key=value`: typed by the tool's `inputSchema`
        /// before the call ([`super::typed`]).
        text_keys: Vec<String>,
    },
    /// `resources`.
    Resources,
    /// `templates`.
    Templates,
    /// `read URI`.
    Read {
        /// Resource URI.
        uri: String,
    },
    /// `rpc METHOD PARAMS`.
    Rpc {
        /// Method name.
        method: String,
        /// Params (object or null).
        params: Value,
    },
    /// `--help`.
    Help,
}

/// A command-line mistake (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage(pub String);

fn usage<T>(msg: impl Into<String>) -> Result<T, Usage> {
    Err(Usage(msg.into()))
}

/// True for an RFC 9110 `token` (header field name).
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn parse_header(h: &str) -> Result<(String, String), Usage> {
    let Some((name, value)) = h.split_once(':') else {
        return usage(format!("--header '{h}' is not 'Name: value'"));
    };
    let (name, value) = (name.trim(), value.trim());
    if !is_token(name) {
        return usage(format!("--header '{h}': invalid header name '{name}'"));
    }
    if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return usage(format!("--header '{name}': value has control characters"));
    }
    Ok((name.to_string(), value.to_string()))
}

fn parse_timeout(v: &str) -> Result<Duration, Usage> {
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => usage(format!(
            "invalid --timeout '{v}' (expected seconds, > 0 and at most 86400)"
        )),
    }
}

fn json_object(text: &str, what: &str) -> Result<Value, Usage> {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => usage(format!("{what} must be a JSON object")),
        Err(e) => usage(format!("{what} is not valid JSON: {e}")),
    }
}

fn read_stdin(stdin: &mut dyn Read) -> Result<String, Usage> {
    let mut s = String::new();
    stdin
        .take(MAX_STDIN_BYTES + 1)
        .read_to_string(&mut s)
        .map_err(|e| Usage(format!("cannot read stdin: {e}")))?;
    if s.len() as u64 > MAX_STDIN_BYTES {
        return usage(format!("stdin larger than {MAX_STDIN_BYTES} bytes"));
    }
    Ok(s)
}

/// `call` arguments: nothing (→ `{}`), one JSON object, `-`, or pairs;
/// with the keys given as `key=value` (typed later by the tool's schema).
fn parse_arguments(args: &[String], stdin: &mut dyn Read) -> Result<(Value, Vec<String>), Usage> {
    match args {
        [] => return Ok((json!({}), Vec::new())),
        [one] if one == "-" => {
            return Ok((
                json_object(&read_stdin(stdin)?, "arguments from stdin")?,
                Vec::new(),
            ))
        }
        [one] if one.trim_start().starts_with('{') => {
            return Ok((json_object(one, "arguments")?, Vec::new()))
        }
        _ => {}
    }
    let mut m = Map::new();
    let mut text_keys = Vec::new();
    for a in args {
        let Some((k, v)) = a.split_once('=') else {
            return usage(format!(
                "argument '{a}' is not key=value, key:=JSON or a JSON object"
            ));
        };
        let (key, value) = match k.strip_suffix(':') {
            Some(key) => match serde_json::from_str::<Value>(v) {
                Ok(j) => (key, j),
                Err(e) => return usage(format!("argument '{a}': value is not valid JSON: {e}")),
            },
            None => {
                text_keys.push(k.to_string());
                (k, Value::String(v.to_string()))
            }
        };
        if key.is_empty() {
            return usage(format!("argument '{a}' has an empty key"));
        }
        if m.insert(key.to_string(), value).is_some() {
            return usage(format!("argument '{key}' given twice"));
        }
    }
    Ok((Value::Object(m), text_keys))
}

/// Parses the arguments after `client`.
///
/// # Errors
/// [`Usage`] for anything malformed.
pub fn parse(args: &[String], stdin: &mut dyn Read) -> Result<Invocation, Usage> {
    let mut inv = Invocation {
        url: DEFAULT_URL.to_string(),
        era: Era::Auto,
        pin: None,
        headers: Vec::new(),
        timeout: DEFAULT_TIMEOUT,
        max_list_bytes: DEFAULT_MAX_LIST_BYTES,
        text: false,
        raw: false,
        verbose: false,
        command: Command::Help,
    };
    let mut positional: Vec<String> = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if options_done || !arg.starts_with('-') || arg == "-" {
            positional.push(arg.clone());
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, Usage> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            let v = args.get(i).cloned();
            i += 1;
            v.ok_or_else(|| Usage(format!("{name} needs a value")))
        };
        match flag {
            "-h" | "--help" => {
                inv.command = Command::Help;
                return Ok(inv);
            }
            "--text" => inv.text = true,
            "--raw" => inv.raw = true,
            "--max-list-bytes" => {
                let v = value("--max-list-bytes")?;
                inv.max_list_bytes = match v.parse::<u64>() {
                    Ok(n) if n > 0 => n,
                    _ => {
                        return usage(format!(
                            "invalid --max-list-bytes '{v}' (expected a whole number of bytes > 0)"
                        ))
                    }
                };
            }
            "-v" | "--verbose" => inv.verbose = true,
            "--url" => {
                let u = value("--url")?;
                if !(u.starts_with("http://") || u.starts_with("https://")) {
                    return usage(format!(
                        "invalid --url '{u}' (expected http:// or https://)"
                    ));
                }
                inv.url = u;
            }
            "--era" => {
                let e = value("--era")?;
                inv.era = Era::parse(&e).ok_or_else(|| {
                    Usage(format!(
                        "invalid --era '{e}' (expected auto, modern or legacy)"
                    ))
                })?;
            }
            "--protocol-version" => {
                let v = value("--protocol-version")?;
                if v.is_empty() || !v.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
                    return usage(format!("invalid --protocol-version '{v}'"));
                }
                inv.pin = Some(v);
            }
            "--header" => inv.headers.push(parse_header(&value("--header")?)?),
            "--timeout" => inv.timeout = parse_timeout(&value("--timeout")?)?,
            _ => return usage(format!("unknown option '{arg}'")),
        }
    }
    let Some((cmd, rest)) = positional.split_first() else {
        return usage("missing COMMAND");
    };
    let arity = |n: usize, shape: &str| -> Result<(), Usage> {
        if rest.len() == n {
            Ok(())
        } else {
            usage(format!("usage: xmd client {shape}"))
        }
    };
    inv.command = match cmd.as_str() {
        "discover" => arity(0, "discover").map(|_| Command::Discover)?,
        "initialize" => arity(0, "initialize").map(|_| Command::Initialize)?,
        "ping" => arity(0, "ping").map(|_| Command::Ping)?,
        "tools" => arity(0, "tools").map(|_| Command::Tools)?,
        "resources" => arity(0, "resources").map(|_| Command::Resources)?,
        "templates" => arity(0, "templates").map(|_| Command::Templates)?,
        "read" => {
            arity(1, "read URI")?;
            Command::Read {
                uri: rest[0].clone(),
            }
        }
        "call" => {
            let Some((name, args)) = rest.split_first() else {
                return usage("usage: xmd client call NAME [JSON | key=value | key:=JSON ...]");
            };
            let (arguments, text_keys) = parse_arguments(args, stdin)?;
            Command::Call {
                name: name.clone(),
                arguments,
                text_keys,
            }
        }
        "rpc" => {
            let params = match rest {
                [_] => Value::Null,
                [_, p] if p == "-" => json_object(&read_stdin(stdin)?, "PARAMS from stdin")?,
                [_, p] => json_object(p, "PARAMS")?,
                _ => return usage("usage: xmd client rpc METHOD [PARAMS_JSON]"),
            };
            Command::Rpc {
                method: rest[0].clone(),
                params,
            }
        }
        other => return usage(format!("unknown command '{other}'")),
    };
    if inv.text && !matches!(inv.command, Command::Call { .. } | Command::Read { .. }) {
        return usage("--text only applies to call and read");
    }
    Ok(inv)
}

/// What a command produced: stdout text, an optional stderr line, the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Text for stdout (may be empty).
    pub stdout: String,
    /// One line for stderr, if any.
    pub stderr: Option<String>,
    /// Exit code.
    pub code: u8,
}

fn pretty(v: &impl serde::Serialize) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

fn with_newline(mut s: String) -> String {
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

fn failure(e: &Error) -> Outcome {
    let stdout = match e {
        Error::JsonRpc {
            code,
            message,
            data,
        } => {
            let mut err = json!({"code": code, "message": message});
            if let Some(d) = data {
                err["data"] = d.clone();
            }
            pretty(&json!({ "error": err }))
        }
        _ => String::new(),
    };
    let hint = match e {
        Error::Transport {
            kind: TransportKind::Timeout,
            ..
        } => " (--timeout bounds the whole command)",
        _ => "",
    };
    Outcome {
        stdout,
        stderr: Some(format!("xmd client: {e}{hint}")),
        code: e.exit_code(),
    }
}

/// What reaches the terminal: `--text` output and the stderr line with
/// their controls escaped unless `--raw`; JSON with C1 written `\u00XX`.
fn terminal_safe(o: Outcome, inv: &Invocation) -> Outcome {
    // Text is what call/read print with --text; a JSON-RPC error is JSON.
    let text = inv.text && (o.code == EXIT_OK || o.code == EXIT_TOOL_ERROR);
    let stdout = if text {
        if inv.raw {
            o.stdout
        } else {
            escape_controls(&o.stdout).into_owned()
        }
    } else {
        json_without_c1(&o.stdout).into_owned()
    };
    let stderr = match (o.stderr, inv.raw) {
        (Some(line), false) => Some(escape_controls(&line).into_owned()),
        (line, _) => line,
    };
    Outcome {
        stdout,
        stderr,
        code: o.code,
    }
}

/// `arguments` with each `key=value` of `text_keys` typed by the
/// `inputSchema` of tool `name` (one `tools/list` first; none when every
/// argument was JSON). An unknown tool leaves the strings as they are (the
/// server then names the tool it does not know). The inner `Err` is a usage
/// message: a value that fits none of the property's types.
fn typed_arguments(
    client: &Client,
    name: &str,
    arguments: &Value,
    text_keys: &[String],
) -> Result<Result<Value, String>, Error> {
    let mut arguments = arguments.clone();
    if text_keys.is_empty() {
        return Ok(Ok(arguments));
    }
    let tools = client.list_tools()?;
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        return Ok(Ok(arguments));
    };
    for key in text_keys {
        let text = arguments[key.as_str()]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match super::typed::typed_value(&tool.input_schema, key, &text) {
            Ok(v) => arguments[key.as_str()] = v,
            Err(msg) => return Ok(Err(msg)),
        }
    }
    Ok(Ok(arguments))
}

/// Runs a parsed command against a client; the outcome is terminal-safe
/// (see `--raw`).
pub fn run(client: &Client, inv: &Invocation) -> Outcome {
    terminal_safe(run_raw(client, inv), inv)
}

fn run_raw(client: &Client, inv: &Invocation) -> Outcome {
    let ok = |stdout: String| Outcome {
        stdout,
        stderr: None,
        code: EXIT_OK,
    };
    let result: Result<Outcome, Error> = (|| {
        Ok(match &inv.command {
            Command::Help => ok(help()),
            Command::Discover => ok(pretty(&client.discover()?)),
            Command::Initialize => ok(pretty(&client.initialize()?)),
            Command::Ping => {
                client.ping()?;
                ok(pretty(&json!({})))
            }
            Command::Tools => ok(pretty(&json!({ "tools": client.list_tools()? }))),
            Command::Resources => ok(pretty(&json!({ "resources": client.list_resources()? }))),
            Command::Templates => ok(pretty(
                &json!({ "resourceTemplates": client.list_resource_templates()? }),
            )),
            Command::Read { uri } => {
                let r = client.read_resource(uri)?;
                if inv.text {
                    let texts: Vec<&str> = r
                        .contents
                        .iter()
                        .filter_map(|c| c.text.as_deref())
                        .collect();
                    ok(with_newline(texts.join("\n\n")))
                } else {
                    ok(pretty(&r))
                }
            }
            Command::Call {
                name,
                arguments,
                text_keys,
            } => {
                let arguments = match typed_arguments(client, name, arguments, text_keys)? {
                    Ok(a) => a,
                    Err(msg) => {
                        return Ok(Outcome {
                            stdout: String::new(),
                            stderr: Some(format!("xmd client: {msg}")),
                            code: EXIT_USAGE,
                        })
                    }
                };
                let r = client.call_tool(name, arguments)?;
                let stdout = if inv.text {
                    with_newline(r.text())
                } else {
                    pretty(&r)
                };
                if r.is_error {
                    let first = r.text();
                    let first = first.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                    Outcome {
                        stdout,
                        stderr: Some(format!(
                            "xmd client: tool {name} returned isError: {}",
                            super::error::one_line(first, super::DISPLAY_DETAIL_CHARS)
                        )),
                        code: EXIT_TOOL_ERROR,
                    }
                } else {
                    ok(stdout)
                }
            }
            Command::Rpc { method, params } => ok(pretty(&client.rpc(method, params.clone())?)),
        })
    })();
    result.unwrap_or_else(|e| failure(&e))
}

/// Builds the client an invocation describes; `--timeout` runs from now.
pub fn client_for(inv: &Invocation) -> Client {
    let mut c = Client::new(&inv.url)
        .era(inv.era)
        .timeout(inv.timeout)
        .deadline(std::time::Instant::now() + inv.timeout)
        .max_list_bytes(inv.max_list_bytes);
    for (k, v) in &inv.headers {
        c = c.header(k, v);
    }
    if let Some(p) = &inv.pin {
        c = c.pin_version(p);
    }
    if inv.verbose {
        c = if inv.raw {
            c.trace(Arc::new(|line: &str| eprintln!("xmd client: {line}")))
        } else {
            c.trace(Arc::new(|line: &str| {
                eprintln!("xmd client: {}", escape_controls(line));
            }))
        };
    }
    c
}

/// `xmd client …` (arguments after `client`): parse, run, print, close the
/// session, and return the exit code.
pub fn main(args: &[String]) -> ExitCode {
    let inv = match parse(args, &mut std::io::stdin()) {
        Ok(inv) => inv,
        Err(Usage(msg)) => {
            eprintln!("xmd client: {msg}\nTry 'xmd client --help'.");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if inv.command == Command::Help {
        print!("{}", help());
        return ExitCode::from(EXIT_OK);
    }
    let client = client_for(&inv);
    let mut outcome = run(&client, &inv);
    if let Err(e) = client.close() {
        if outcome.code == EXIT_OK {
            outcome = Outcome {
                stdout: outcome.stdout,
                stderr: Some(if inv.raw {
                    format!("xmd client: closing the session: {e}")
                } else {
                    escape_controls(&format!("xmd client: closing the session: {e}")).into_owned()
                }),
                code: e.exit_code(),
            };
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(outcome.stdout.as_bytes());
    let _ = out.flush();
    if let Some(line) = outcome.stderr {
        eprintln!("{line}");
    }
    ExitCode::from(outcome.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Invocation, Usage> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&v, &mut std::io::empty())
    }

    fn cmd(args: &[&str]) -> Command {
        p(args).unwrap().command
    }

    #[test]
    fn defaults_and_options_anywhere() {
        let inv = p(&["tools"]).unwrap();
        assert_eq!(inv.url, DEFAULT_URL);
        assert_eq!(inv.era, Era::Auto);
        assert_eq!(inv.timeout, DEFAULT_TIMEOUT);
        let inv = p(&[
            "call",
            "--url=http://h:1/mcp",
            "t",
            "--era",
            "legacy",
            "--header",
            "Authorization:  Bearer x ",
            "--timeout",
            "2.5",
            "--text",
            "--protocol-version",
            "2025-06-18",
            "-v",
        ])
        .unwrap();
        assert_eq!(inv.url, "http://h:1/mcp");
        assert_eq!(inv.era, Era::Legacy);
        assert_eq!(
            inv.headers,
            vec![("Authorization".into(), "Bearer x".into())]
        );
        assert_eq!(inv.timeout, Duration::from_millis(2500));
        assert!(inv.text && inv.verbose);
        assert_eq!(inv.pin.as_deref(), Some("2025-06-18"));
        assert_eq!(inv.max_list_bytes, DEFAULT_MAX_LIST_BYTES);
        assert!(!inv.raw);
        let other = p(&["--raw", "--max-list-bytes=1000", "tools"]).unwrap();
        assert!(other.raw);
        assert_eq!(other.max_list_bytes, 1000);
        assert_eq!(
            inv.command,
            Command::Call {
                name: "t".into(),
                arguments: json!({}),
                text_keys: vec![]
            }
        );
    }

    #[test]
    fn call_argument_forms() {
        assert_eq!(
            cmd(&[
                "call",
                "echo",
                "message=hi",
                "n:=5",
                "b:=true",
                "s=a=b",
                "o:={\"k\":[1]}"
            ]),
            Command::Call {
                name: "echo".into(),
                arguments: json!({"message": "hi", "n": 5, "b": true, "s": "a=b", "o": {"k": [1]}}),
                text_keys: vec!["message".into(), "s".into()]
            }
        );
        assert_eq!(
            cmd(&["call", "t", r#"{"url":"u"}"#]),
            Command::Call {
                name: "t".into(),
                arguments: json!({"url": "u"}),
                text_keys: vec![]
            }
        );
        let v: Vec<String> = ["call", "t", "-"].iter().map(|s| s.to_string()).collect();
        let inv = parse(&v, &mut &br#"{"a":1}"#[..]).unwrap();
        assert_eq!(
            inv.command,
            Command::Call {
                name: "t".into(),
                arguments: json!({"a": 1}),
                text_keys: vec![]
            }
        );
        // After --, a dash-leading value is an argument.
        assert_eq!(
            cmd(&["call", "t", "--", "q=-x"]),
            Command::Call {
                name: "t".into(),
                arguments: json!({"q": "-x"}),
                text_keys: vec!["q".into()]
            }
        );
    }

    #[test]
    fn rpc_and_read() {
        assert_eq!(
            cmd(&["rpc", "tools/list"]),
            Command::Rpc {
                method: "tools/list".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            cmd(&["rpc", "tools/list", r#"{"cursor":"c"}"#]),
            Command::Rpc {
                method: "tools/list".into(),
                params: json!({"cursor": "c"})
            }
        );
        assert_eq!(
            cmd(&["read", "x://a"]),
            Command::Read {
                uri: "x://a".into()
            }
        );
        assert_eq!(cmd(&["--help"]), Command::Help);
        assert_eq!(cmd(&["tools", "-h"]), Command::Help);
    }

    #[test]
    fn usage_errors() {
        let bad: &[&[&str]] = &[
            &[],
            &["frobnicate"],
            &["tools", "extra"],
            &["call"],
            &["call", "t", "novalue"],
            &["call", "t", "=v"],
            &["call", "t", "a=1", "a=2"],
            &["call", "t", "n:=nope"],
            &["call", "t", "{bad json"],
            &["call", "t", "[1]"],
            &["read"],
            &["read", "a", "b"],
            &["rpc"],
            &["rpc", "m", "[]"],
            &["rpc", "m", "{}", "x"],
            &["--url", "ftp://x", "tools"],
            &["--url"],
            &["--era", "future", "tools"],
            &["--timeout", "0", "tools"],
            &["--timeout", "abc", "tools"],
            &["--header", "NoColon", "tools"],
            &["--header", "Bad Name: v", "tools"],
            &["--protocol-version", "", "tools"],
            &["--bogus", "tools"],
            &["--text", "tools"],
            &["--max-list-bytes", "0", "tools"],
            &["--max-list-bytes", "-1", "tools"],
            &["--max-list-bytes", "1e6", "tools"],
        ];
        for args in bad {
            assert!(p(args).is_err(), "{args:?} should be a usage error");
        }
        assert_eq!(p(&[]).unwrap_err(), Usage("missing COMMAND".into()));
        assert_eq!(
            p(&["call", "t", "a=1", "a=2"]).unwrap_err(),
            Usage("argument 'a' given twice".into())
        );
    }

    #[test]
    fn help_documents_every_command_option_and_exit_code() {
        let h = help();
        for needle in [
            "discover",
            "initialize",
            "ping",
            "tools",
            "call NAME",
            "resources",
            "templates",
            "read URI",
            "rpc METHOD",
            "--url",
            "--era",
            "--header",
            "--timeout",
            "--text",
            "--protocol-version",
            "--verbose",
            "--raw",
            "--max-list-bytes",
            "time limit of the whole command",
            "at most 5 hops",
            "one new session and retries once",
            DEFAULT_URL,
            "0  success",
            "1  the tool",
            "2  usage",
            "3  the server answered with a JSON-RPC error",
            "4  transport",
        ] {
            assert!(h.contains(needle), "help lacks {needle:?}");
        }
    }

    #[test]
    fn failures_map_to_exit_codes_and_one_line() {
        let o = failure(&Error::JsonRpc {
            code: -32602,
            message: "Unknown tool: x\nsecond".into(),
            data: None,
        });
        assert_eq!(o.code, EXIT_JSONRPC);
        assert_eq!(
            o.stderr.as_deref(),
            Some("xmd client: JSON-RPC error -32602: Unknown tool: x second")
        );
        assert_eq!(
            serde_json::from_str::<Value>(&o.stdout).unwrap(),
            json!({"error": {"code": -32602, "message": "Unknown tool: x\nsecond"}})
        );
        let o = failure(&Error::protocol("bad"));
        assert_eq!((o.code, o.stdout.as_str()), (EXIT_FAILURE, ""));
        let o = failure(&Error::Transport {
            kind: TransportKind::Timeout,
            message: "the deadline passed".into(),
        });
        assert_eq!(
            o.stderr.as_deref(),
            Some("xmd client: timed out: the deadline passed (--timeout bounds the whole command)")
        );
    }
}
