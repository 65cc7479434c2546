//! The `xmd client` command line: options anywhere, the commands and
//! their arguments (`call`'s JSON, `-` from stdin, or `key=value` and
//! `key:=JSON` pairs), parsed into an [`Invocation`] or refused with a
//! [`Usage`] message.

use std::io::Read;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::client::{Era, DEFAULT_MAX_LIST_BYTES, DEFAULT_TIMEOUT, DEFAULT_URL};

/// Largest JSON read from stdin for `-` arguments: 16 MiB. More is a usage
/// error ("stdin larger than …").
pub const MAX_STDIN_BYTES: u64 = 16 * 1024 * 1024;

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
        /// before the call ([`crate::client::typed`]).
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
}
