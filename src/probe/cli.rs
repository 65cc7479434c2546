//! `xmd probe`: the command line.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};

use super::report::{render, Format};
use super::{
    baseline, catalogue, run, Config, EraChoice, FailOn, FramingMode, RunError, Scope, TargetKind,
    CLASSES, DEFAULT_BUDGET, DEFAULT_PACE, DEFAULT_TIMEOUT,
};

/// Exit code: no failure beyond the baseline (under `--fail-on`).
pub const EXIT_OK: u8 = 0;
/// Exit code: MUST failures (or, with `--fail-on should`, warnings); no baseline given.
pub const EXIT_FAILURES: u8 = 1;
/// Exit code: bad command line or baseline file.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the server could not be reached or answered in no era
/// (as `xmd client`'s 4).
pub const EXIT_TRANSPORT: u8 = 4;
/// Exit code: a failure the `--baseline` does not list (a regression).
pub const EXIT_REGRESSION: u8 = 5;

/// The `xmd probe --help` text.
pub fn help() -> String {
    format!(
        "xmd probe — check any MCP server or gateway (Streamable HTTP, both protocol eras, HTTP/1.1 framing)\n\n\
Usage:\n  xmd probe URL [OPTIONS]\n  xmd probe --list [--format text|json]\n\n\
Options:\n\
\x20 --era auto|modern|legacy|both   auto: the era `xmd client` settles on (server/discover, else\n\
\x20                                 initialize); both: every check in each era the server speaks [default: auto]\n\
\x20 --class LIST                    comma-separated classes to run: {} [default: all]\n\
\x20 --framing off|safe|full         HTTP/1.1 framing checks; safe sends only malformed heads that cannot\n\
\x20                                 poison a shared pool, full adds CL+TE and non-chunked final codings [default: safe]\n\
\x20 --format text|json|junit|sarif  report format [default: text]\n\
\x20 --out FILE                      write the report to FILE instead of stdout\n\
\x20 --baseline FILE                 expected results with reasons (JSON: {{\"expected\": [{{\"id\", \"era\",\n\
\x20                                 \"verdict\", \"reason\"}}]}}); a failure it does not list exits 5\n\
\x20 --fail-on must|should|never     what fails the run: fail (must), fail or warn (should), nothing [default: must]\n\
\x20 --seed N                        seed of the generated ids, names and payloads (recorded in the report) [default: 1]\n\
\x20 --timeout SECS                  timeout of one exchange [default: {}]\n\
\x20 --header 'Name: value'          extra header on every request, repeatable (redacted in evidence when\n\
\x20                                 Authorization, Cookie or Proxy-Authorization)\n\
\x20 --target server|gateway         gateway: a bare HTTP error status passes where the spec lets\n\
\x20                                 intermediaries skip the JSON-RPC body; no DNS-rebinding check [default: server]\n\
\x20 --call TOOL                     a tool the probe may call (besides those annotated readOnlyHint: true)\n\
\x20 --args JSON                     arguments of the tool called [default: {{}}]\n\
\x20 --budget N                      most requests sent; past it checks end inconclusive [default: {}]\n\
\x20 --pace MS                       least milliseconds between two requests [default: {}]\n\
\x20 --list                          print every check with its level and clause, then exit\n\
\x20 -h, --help                      print this help\n\n\
Safe by default: only server/discover, initialize, ping, the */list methods, resources/read, and\n\
tools/call of read-only tools (or --call) are sent with real names; every hostile payload is\n\
followed by a liveness request, and a server that stops answering is reported as a crash.\n\
The URL must be http:// (the probe writes raw HTTP/1.1 bytes).\n\n\
Verdicts: pass, fail (a MUST broken), warn (a SHOULD broken), skip (capability not declared, era not\n\
spoken, not applicable), inconclusive (a prerequisite failed). Score = passed MUSTs / applicable MUSTs.\n\n\
Exit codes:\n\
\x20 0  no failure (under --fail-on) beyond the baseline\n\
\x20 1  failures, and no --baseline given\n\
\x20 2  usage error (or a bad baseline file)\n\
\x20 4  the server could not be reached, or answered in no era\n\
\x20 5  a failure the --baseline does not list (a regression)\n",
        CLASSES.join(","),
        DEFAULT_TIMEOUT.as_secs(),
        DEFAULT_BUDGET,
        DEFAULT_PACE.as_millis(),
    )
}

/// A parsed command line.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub config: Config,
    pub format: Format,
    pub out: Option<String>,
    pub baseline: Option<String>,
    pub fail_on: FailOn,
    pub list: bool,
    pub help: bool,
}

/// Parses arguments (after `probe`).
///
/// # Errors
/// An unknown option, a missing or bad value, or no URL.
pub fn parse(args: &[String]) -> Result<Invocation, String> {
    let mut cfg = Config::new("");
    let mut inv_format = Format::Text;
    let (mut out, mut base, mut fail_on, mut list, mut help) =
        (None, None, FailOn::Must, false, false);
    let mut url = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut val = |name: &str| -> Result<String, String> {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a {
            "-h" | "--help" => help = true,
            "--list" => list = true,
            "--era" => {
                cfg.era = match val(a)?.as_str() {
                    "auto" => EraChoice::Auto,
                    "modern" => EraChoice::Modern,
                    "legacy" => EraChoice::Legacy,
                    "both" => EraChoice::Both,
                    v => return Err(format!("--era: {v:?} is not auto, modern, legacy or both")),
                }
            }
            "--class" => {
                for c in val(a)?.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                    let up = c.to_ascii_uppercase();
                    if !CLASSES.contains(&up.as_str()) {
                        return Err(format!(
                            "--class: {c:?} is not one of {}",
                            CLASSES.join(",")
                        ));
                    }
                    cfg.classes.push(up);
                }
            }
            "--framing" => {
                cfg.framing = match val(a)?.as_str() {
                    "off" => FramingMode::Off,
                    "safe" => FramingMode::Safe,
                    "full" => FramingMode::Full,
                    v => return Err(format!("--framing: {v:?} is not off, safe or full")),
                }
            }
            "--format" => {
                let v = val(a)?;
                inv_format = Format::parse(&v)
                    .ok_or_else(|| format!("--format: {v:?} is not text, json, junit or sarif"))?;
            }
            "--out" => out = Some(val(a)?),
            "--baseline" => base = Some(val(a)?),
            "--fail-on" => {
                fail_on = match val(a)?.as_str() {
                    "must" => FailOn::Must,
                    "should" => FailOn::Should,
                    "never" => FailOn::Never,
                    v => return Err(format!("--fail-on: {v:?} is not must, should or never")),
                }
            }
            "--seed" => {
                let v = val(a)?;
                cfg.seed = v
                    .parse()
                    .map_err(|_| format!("--seed: {v:?} is not an unsigned integer"))?;
            }
            "--timeout" => {
                let v = val(a)?;
                let s: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && s.is_finite())
                    .ok_or_else(|| {
                        format!("--timeout: {v:?} is not a positive number of seconds")
                    })?;
                cfg.timeout = Duration::from_secs_f64(s);
            }
            "--header" => {
                let v = val(a)?;
                let (n, hv) = v
                    .split_once(':')
                    .ok_or_else(|| format!("--header: {v:?} is not 'Name: value'"))?;
                let n = n.trim();
                if n.is_empty()
                    || !n
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
                {
                    return Err(format!("--header: {n:?} is not a field name"));
                }
                if hv.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                    return Err("--header: the value holds CR, LF or NUL".into());
                }
                cfg.headers.push((n.to_string(), hv.trim().to_string()));
            }
            "--target" => {
                cfg.target = match val(a)?.as_str() {
                    "server" => TargetKind::Server,
                    "gateway" => TargetKind::Gateway,
                    v => return Err(format!("--target: {v:?} is not server or gateway")),
                }
            }
            "--call" => cfg.call = Some(val(a)?),
            "--args" => {
                let v = val(a)?;
                let j: Value =
                    serde_json::from_str(&v).map_err(|e| format!("--args: not JSON: {e}"))?;
                if !j.is_object() {
                    return Err("--args: not a JSON object".into());
                }
                cfg.args = Some(j);
            }
            "--budget" => {
                let v = val(a)?;
                cfg.budget = v
                    .parse()
                    .map_err(|_| format!("--budget: {v:?} is not a count"))?;
            }
            "--pace" => {
                let v = val(a)?;
                cfg.pace = Duration::from_millis(
                    v.parse()
                        .map_err(|_| format!("--pace: {v:?} is not milliseconds"))?,
                );
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => {
                if url.is_some() {
                    return Err(format!("unexpected argument {s:?} (one URL only)"));
                }
                url = Some(s.to_string());
            }
        }
        i += 1;
    }
    if !list && !help {
        cfg.url = url.ok_or("no URL (xmd probe URL; see --help)")?;
    }
    Ok(Invocation {
        config: cfg,
        format: inv_format,
        out,
        baseline: base,
        fail_on,
        list,
        help,
    })
}

/// The catalogue as `--list` prints it.
pub fn list(format: Format) -> String {
    if format == Format::Json {
        let v: Vec<Value> = catalogue()
            .iter()
            .map(|d| {
                json!({"id": d.id, "class": d.class(), "level": d.level.as_str(),
                    "eras": match d.scope { Scope::Modern => vec!["modern"], Scope::Legacy => vec!["legacy"],
                        Scope::Both => vec!["modern", "legacy"], Scope::Http => vec!["http"] },
                    "title": d.title, "clause": d.clause, "url": d.url,
                    "hostile": d.hostile, "framingFullOnly": d.full_only})
            })
            .collect();
        return serde_json::to_string_pretty(&v).expect("JSON") + "\n";
    }
    let mut out = String::new();
    for d in catalogue() {
        let scope = match d.scope {
            Scope::Modern => "modern",
            Scope::Legacy => "legacy",
            Scope::Both => "both",
            Scope::Http => "http",
        };
        out.push_str(&format!(
            "{:<9} {:<6} {:<6} {}\n          {} <{}>\n",
            d.id,
            d.level.as_str(),
            scope,
            d.title,
            d.clause,
            d.url
        ));
    }
    out.push_str(&format!("{} checks\n", catalogue().len()));
    out
}

fn emit(inv: &Invocation, text: &str) -> Result<(), String> {
    match &inv.out {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("--out {path}: {e}")),
        None => {
            use std::io::Write;
            let mut o = std::io::stdout().lock();
            o.write_all(text.as_bytes()).map_err(|e| e.to_string())
        }
    }
}

/// Runs `xmd probe` and returns its exit code.
pub fn main(args: &[String]) -> ExitCode {
    let inv = match parse(args) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("xmd probe: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if inv.help {
        print!("{}", help());
        return ExitCode::from(EXIT_OK);
    }
    if inv.list {
        return match emit(&inv, &list(inv.format)) {
            Ok(()) => ExitCode::from(EXIT_OK),
            Err(e) => {
                eprintln!("xmd probe: {e}");
                ExitCode::from(EXIT_USAGE)
            }
        };
    }
    let expected = match &inv.baseline {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| format!("--baseline {p}: {e}"))
            .and_then(|t| baseline::parse(&t))
        {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("xmd probe: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        },
    };
    let mut report = match run(&inv.config) {
        Ok(r) => r,
        Err(RunError::Usage(e)) => {
            eprintln!("xmd probe: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
        Err(RunError::Unreachable(e)) => {
            eprintln!("xmd probe: no MCP era could be settled: {e}");
            return ExitCode::from(EXIT_TRANSPORT);
        }
    };
    if let Some(b) = &expected {
        baseline::apply(&mut report, b);
    }
    if let Err(e) = emit(&inv, &render(&report, inv.format)) {
        eprintln!("xmd probe: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    let bad = report.new_failures(inv.fail_on);
    for r in &bad {
        eprintln!(
            "xmd probe: {} {} [{}]: {}",
            r.verdict.as_str(),
            r.id,
            r.era.as_str(),
            r.reason
        );
    }
    ExitCode::from(match (bad.is_empty(), expected.is_some()) {
        (true, _) => EXIT_OK,
        (false, true) => EXIT_REGRESSION,
        (false, false) => EXIT_FAILURES,
    })
}
