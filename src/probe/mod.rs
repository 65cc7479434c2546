//! `xmd probe URL`: a protocol-hardening harness for any MCP server or
//! gateway on Streamable HTTP, in both protocol eras (the stateless
//! 2026-07-28 revision and the `initialize` handshake revisions), plus
//! HTTP/1.1 framing.
//!
//! Every check has a stable id (`<CLASS>-<NN>`), the clause it enforces
//! (MCP revision and section, JSON-RPC 2.0 section, RFC 9110/9112 section)
//! and a level (MUST or SHOULD). A check ends `pass`, `fail` (a MUST
//! violated), `warn` (a SHOULD violated), `skip` (a capability the server
//! does not declare, or an era it does not speak) or `inconclusive` (a
//! prerequisite failed, the budget ran out, or the server went down).
//! Score = passed MUSTs / applicable MUSTs, per class and overall.
//!
//! Safe by default: only `server/discover`, `initialize`, `ping`, the
//! `*/list` methods, `resources/read`, and `tools/call` of tools annotated
//! `readOnlyHint: true` (or the one named with `--call`) are sent with
//! valid names; every hostile payload is followed by a liveness request.
//! `--framing full` adds the payloads that could desynchronise a shared
//! connection pool (CL+TE, a final coding other than chunked).

pub mod baseline;
mod checks;
pub mod cli;
mod ctx;
pub mod report;
mod run;
pub mod wire;

use std::time::{Duration, SystemTime};

use serde_json::Value;

pub use checks::catalogue;
use ctx::Ctx;
pub use ctx::{LATEST_LEGACY, MODERN};
pub use run::run;
use wire::Exchange;

/// Most requests one run sends, liveness probes included: 600. Past it
/// the remaining checks end `inconclusive` ("request budget spent");
/// `--budget N` changes it.
pub const DEFAULT_BUDGET: usize = 600;

/// Least time between two requests: 5 ms (`--pace MS`), so a run of a few
/// hundred requests stays far below any rate limit worth having.
pub const DEFAULT_PACE: Duration = Duration::from_millis(5);

/// Timeout of one exchange: 10 s (`--timeout SECS`). Past it the exchange
/// counts as unanswered.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Version of the JSON report's schema (`docs/probe.schema.json`).
pub const SCHEMA_VERSION: u32 = 1;

/// Which era a check result belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Era {
    /// 2026-07-28 (stateless, `server/discover`).
    Modern,
    /// 2025-11-25 / 2025-06-18 / 2025-03-26 (`initialize`).
    Legacy,
    /// HTTP/1.1 framing: no era.
    Http,
}

impl Era {
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
            Era::Http => "http",
        }
    }

    pub fn parse(s: &str) -> Option<Era> {
        match s {
            "modern" => Some(Era::Modern),
            "legacy" => Some(Era::Legacy),
            "http" => Some(Era::Http),
            _ => None,
        }
    }
}

/// `--era`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EraChoice {
    Auto,
    Modern,
    Legacy,
    Both,
}

/// `--framing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FramingMode {
    Off,
    Safe,
    Full,
}

impl FramingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FramingMode::Off => "off",
            FramingMode::Safe => "safe",
            FramingMode::Full => "full",
        }
    }
}

/// `--target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Server,
    Gateway,
}

/// A check's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Must,
    Should,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
        }
    }
}

/// The check classes, in report order.
pub const CLASSES: [&str; 6] = ["DISC", "HDR", "TRANS", "RPC", "PRIM", "FRAME"];

/// Which eras a check runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Modern,
    Legacy,
    Both,
    Http,
}

/// One check of the catalogue.
pub struct CheckDef {
    /// Stable id, `<CLASS>-<NN>`.
    pub id: &'static str,
    pub level: Level,
    pub scope: Scope,
    /// What is checked, one line.
    pub title: &'static str,
    /// The clause, e.g. "MCP 2026-07-28 basic/transports/streamable-http §Protocol Version Header".
    pub clause: &'static str,
    /// The clause's URL.
    pub url: &'static str,
    /// Sends a hostile payload: a liveness request follows.
    pub hostile: bool,
    /// Only with `--framing full`.
    pub full_only: bool,
    pub(crate) run: fn(&mut Ctx, Era) -> Res,
}

impl CheckDef {
    pub fn class(&self) -> &'static str {
        CLASSES
            .iter()
            .find(|c| self.id.split('-').next() == Some(**c))
            .copied()
            .unwrap_or("?")
    }
}

/// What a check function found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Res {
    Pass,
    /// The rule is broken: `fail` for a MUST, `warn` for a SHOULD.
    Violation(String),
    Skip(String),
    Inconclusive(String),
}

/// A verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    Pass,
    Fail,
    Warn,
    Skip,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Warn => "warn",
            Verdict::Skip => "skip",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Warn,
            Verdict::Skip,
            Verdict::Inconclusive,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// A probe run's settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub url: String,
    pub era: EraChoice,
    /// Classes to run (empty: all).
    pub classes: Vec<String>,
    pub framing: FramingMode,
    pub seed: u64,
    pub timeout: Duration,
    pub headers: Vec<(String, String)>,
    pub target: TargetKind,
    /// `--call TOOL`: a tool the probe may call although not read-only.
    pub call: Option<String>,
    /// `--args JSON` for the tool called.
    pub args: Option<Value>,
    pub budget: usize,
    pub pace: Duration,
}

impl Config {
    /// Defaults for `url`.
    pub fn new(url: &str) -> Config {
        Config {
            url: url.to_string(),
            era: EraChoice::Auto,
            classes: Vec::new(),
            framing: FramingMode::Safe,
            seed: 1,
            timeout: DEFAULT_TIMEOUT,
            headers: Vec::new(),
            target: TargetKind::Server,
            call: None,
            args: None,
            budget: DEFAULT_BUDGET,
            pace: DEFAULT_PACE,
        }
    }
}

/// One check's result in one era.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub id: &'static str,
    pub era: Era,
    pub verdict: Verdict,
    pub reason: String,
    /// The baseline's reason, when the baseline expects this verdict.
    pub baselined: Option<String>,
    pub evidence: Vec<Exchange>,
}

/// What an era settled to, as reported.
#[derive(Debug, Clone)]
pub struct EraInfo {
    pub era: Era,
    pub protocol_version: String,
    pub capabilities: Value,
    pub server_info: Value,
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Report {
    pub target: String,
    pub target_kind: TargetKind,
    pub seed: u64,
    pub framing: FramingMode,
    pub started: SystemTime,
    pub finished: SystemTime,
    pub eras: Vec<EraInfo>,
    pub requests: usize,
    pub results: Vec<CheckResult>,
    /// Baseline entries that did not occur (fixed since): id, era.
    pub stale_baseline: Vec<(String, String)>,
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// Bad URL or settings (exit 2).
    Usage(String),
    /// The server answered in no era (exit 4).
    Unreachable(String),
}

/// The check by id.
pub fn check(id: &str) -> Option<&'static CheckDef> {
    catalogue().iter().find(|c| c.id == id).copied()
}

/// Per-class (and overall, under `"overall"`) tallies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub skip: usize,
    pub inconclusive: usize,
    /// Passed MUST checks.
    pub must_passed: usize,
    /// MUST checks that ended pass or fail.
    pub must_applicable: usize,
}

impl Tally {
    fn add(&mut self, def: &CheckDef, v: Verdict) {
        match v {
            Verdict::Pass => self.pass += 1,
            Verdict::Fail => self.fail += 1,
            Verdict::Warn => self.warn += 1,
            Verdict::Skip => self.skip += 1,
            Verdict::Inconclusive => self.inconclusive += 1,
        }
        if def.level == Level::Must && matches!(v, Verdict::Pass | Verdict::Fail) {
            self.must_applicable += 1;
            if v == Verdict::Pass {
                self.must_passed += 1;
            }
        }
    }

    /// passed MUSTs / applicable MUSTs (1.0 with none applicable).
    pub fn score(&self) -> f64 {
        if self.must_applicable == 0 {
            1.0
        } else {
            self.must_passed as f64 / self.must_applicable as f64
        }
    }
}

impl Report {
    /// Tallies per class, in [`CLASSES`] order, then `("overall", …)`.
    pub fn tallies(&self) -> Vec<(&'static str, Tally)> {
        let mut out: Vec<(&'static str, Tally)> =
            CLASSES.iter().map(|c| (*c, Tally::default())).collect();
        let mut all = Tally::default();
        for r in &self.results {
            let def = check(r.id).expect("catalogue id");
            if let Some(t) = out.iter_mut().find(|(c, _)| *c == def.class()) {
                t.1.add(def, r.verdict);
            }
            all.add(def, r.verdict);
        }
        out.push(("overall", all));
        out
    }

    /// The revisions the run spoke.
    pub fn revisions(&self) -> Vec<String> {
        self.eras
            .iter()
            .map(|e| e.protocol_version.clone())
            .collect()
    }

    /// Results that break the run under `fail_on`, not expected by the baseline.
    pub fn new_failures(&self, fail_on: FailOn) -> Vec<&CheckResult> {
        self.results
            .iter()
            .filter(|r| r.baselined.is_none())
            .filter(|r| match fail_on {
                FailOn::Must => r.verdict == Verdict::Fail,
                FailOn::Should => matches!(r.verdict, Verdict::Fail | Verdict::Warn),
                FailOn::Never => false,
            })
            .collect()
    }
}

/// `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    Must,
    Should,
    Never,
}
