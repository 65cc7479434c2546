//! `xmd client`: the MCP client from a shell. Parses arguments, runs one
//! command, prints JSON on stdout, one error line on stderr, and maps the
//! outcome to an exit code.

//!
//! This file runs a parsed command and maps its outcome to the exit code;
//! the command line is parsed in `parse.rs`, and `--help` is in
//! `help.rs`.

mod help;
mod parse;

pub use help::help;
pub use parse::{parse, Command, Invocation, Usage, MAX_STDIN_BYTES};

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{json, Value};

use super::term::{escape_controls, json_without_c1};
use super::{Client, Error, TransportKind};

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
