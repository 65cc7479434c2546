//! One probe run: settle the eras (through `xmd::client` for the
//! handshake), then every selected check in each era it applies to, a
//! liveness request after each hostile payload.

use std::time::SystemTime;

use serde_json::{json, Value};

use super::ctx::{self, Ctx, EraState};
use super::wire::{self, Target};
use super::{
    catalogue, CheckDef, CheckResult, Config, Era, EraChoice, EraInfo, FramingMode, Level, Report,
    Res, RunError, Scope, Verdict, LATEST_LEGACY, MODERN,
};

fn settle_modern(ctx: &mut Ctx) -> Result<EraState, String> {
    let ex = ctx.call(Era::Modern, "server/discover", json!({}));
    ctx.evidence.clear();
    let r = ex.response.ok_or_else(|| ex.error.unwrap_or_default())?;
    let res = r.result().ok_or_else(|| {
        format!(
            "server/discover answered HTTP {} without a result",
            r.status
        )
    })?;
    let supported: Vec<String> = res
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if !supported.iter().any(|v| v == MODERN) {
        return Err(format!(
            "server/discover does not list {MODERN} in supportedVersions"
        ));
    }
    Ok(EraState {
        version: MODERN.into(),
        capabilities: res.get("capabilities").cloned().unwrap_or(json!({})),
        server_info: res
            .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
            .cloned()
            .unwrap_or(Value::Null),
        supported,
        ..EraState::default()
    })
}

/// The legacy handshake through `xmd::client` (its `initialize` and
/// `notifications/initialized`); the session it opens stays open for the
/// run and is ended with `DELETE` afterwards.
fn settle_legacy(cfg: &Config) -> Result<(EraState, crate::client::Client), String> {
    let mut client = crate::client::Client::new(&cfg.url)
        .era(crate::client::Era::Legacy)
        .timeout(cfg.timeout);
    for (n, v) in &cfg.headers {
        client = client.header(n, v);
    }
    let conn = client.initialize().map_err(|e| e.to_string())?;
    Ok((
        EraState {
            version: conn.protocol_version.clone(),
            capabilities: conn.capabilities.clone(),
            server_info: serde_json::to_value(&conn.server_info).unwrap_or(Value::Null),
            session: conn.session_id.clone(),
            ..EraState::default()
        },
        client,
    ))
}

/// Whether the server answers a handshake `initialize` with a result (it
/// speaks both eras). A session it issues is ended with `DELETE` at once.
fn answers_initialize(ctx: &mut Ctx) -> bool {
    let id = ctx.id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": LATEST_LEGACY, "capabilities": {},
        "clientInfo": {"name": ctx::PROBE_CLIENT, "version": env!("CARGO_PKG_VERSION")}}});
    let mut h = ctx.base_headers();
    h.push(("Content-Type".into(), "application/json".into()));
    h.push((
        "Accept".into(),
        "application/json, text/event-stream".into(),
    ));
    let ex = ctx.post_with(&h, body.to_string().as_bytes());
    ctx.evidence.clear();
    let Some(r) = ex.response else { return false };
    if let Some(s) = r.header("mcp-session-id") {
        h.push(("Mcp-Session-Id".into(), s.to_string()));
        let raw = wire::build("DELETE", &ctx.target.target.clone(), &h, b"");
        ctx.raw(&raw);
        ctx.evidence.clear();
    }
    r.result().is_some()
}

/// Which era `--era auto` settles on, through `xmd::client`'s probe.
fn auto_era(cfg: &Config) -> Result<Era, String> {
    let mut client = crate::client::Client::new(&cfg.url)
        .era(crate::client::Era::Auto)
        .timeout(cfg.timeout);
    for (n, v) in &cfg.headers {
        client = client.header(n, v);
    }
    let conn = client.initialize().map_err(|e| e.to_string())?;
    let _ = client.close();
    Ok(match conn.era {
        crate::client::Era::Modern => Era::Modern,
        _ => Era::Legacy,
    })
}

fn selected(cfg: &Config, def: &CheckDef) -> bool {
    (cfg.classes.is_empty()
        || cfg
            .classes
            .iter()
            .any(|c| c.eq_ignore_ascii_case(def.class())))
        && !(def.scope == Scope::Http && cfg.framing == FramingMode::Off)
}

/// Runs the probe.
///
/// # Errors
/// [`RunError::Usage`] for a URL the probe cannot use;
/// [`RunError::Unreachable`] when no era could be settled.
pub fn run(cfg: &Config) -> Result<Report, RunError> {
    let target = Target::parse(&cfg.url).map_err(RunError::Usage)?;
    let started = SystemTime::now();
    let mut ctx = Ctx::new(cfg, target);
    let (want_modern, want_legacy) = match cfg.era {
        EraChoice::Modern => (true, false),
        EraChoice::Legacy => (false, true),
        EraChoice::Both => (true, true),
        EraChoice::Auto => match auto_era(cfg) {
            Ok(Era::Modern) => (true, false),
            Ok(_) => (false, true),
            Err(e) => return Err(RunError::Unreachable(e)),
        },
    };
    let mut why_not: Vec<(Era, String)> = Vec::new();
    if want_modern {
        match settle_modern(&mut ctx) {
            Ok(s) => ctx.modern = Some(s),
            Err(e) => why_not.push((Era::Modern, e)),
        }
    }
    let mut legacy_client = None;
    if want_legacy {
        ctx.sent += 2;
        match settle_legacy(cfg) {
            Ok((s, c)) => {
                ctx.legacy = Some(s);
                legacy_client = Some(c);
            }
            Err(e) => why_not.push((Era::Legacy, e)),
        }
    }
    ctx.dual_era = ctx.legacy.is_some() || (ctx.modern.is_some() && answers_initialize(&mut ctx));
    if ctx.modern.is_none() && ctx.legacy.is_none() {
        let msg = why_not
            .iter()
            .map(|(e, m)| format!("{}: {m}", e.as_str()))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(RunError::Unreachable(msg));
    }
    let mut results = Vec::new();
    for def in catalogue() {
        if !selected(cfg, def) {
            continue;
        }
        let eras: Vec<Era> = match def.scope {
            Scope::Modern => vec![Era::Modern],
            Scope::Legacy => vec![Era::Legacy],
            Scope::Both => vec![Era::Modern, Era::Legacy],
            Scope::Http => vec![Era::Http],
        };
        for era in eras {
            let wanted = match era {
                Era::Modern => want_modern,
                Era::Legacy => want_legacy,
                Era::Http => true,
            };
            if !wanted {
                continue;
            }
            results.push(run_one(&mut ctx, def, era, &why_not));
        }
    }
    if let Some(c) = legacy_client {
        let _ = c.close();
    }
    let mut eras = Vec::new();
    for (era, st) in [(Era::Modern, &ctx.modern), (Era::Legacy, &ctx.legacy)] {
        if let Some(s) = st {
            eras.push(EraInfo {
                era,
                protocol_version: s.version.clone(),
                capabilities: s.capabilities.clone(),
                server_info: s.server_info.clone(),
            });
        }
    }
    Ok(Report {
        target: ctx.target.redacted_url(),
        target_kind: cfg.target,
        seed: cfg.seed,
        framing: cfg.framing,
        started,
        finished: SystemTime::now(),
        eras,
        requests: ctx.sent,
        results,
        stale_baseline: Vec::new(),
    })
}

fn run_one(
    ctx: &mut Ctx,
    def: &'static CheckDef,
    era: Era,
    why_not: &[(Era, String)],
) -> CheckResult {
    let mut out = CheckResult {
        id: def.id,
        era,
        verdict: Verdict::Skip,
        reason: String::new(),
        baselined: None,
        evidence: Vec::new(),
    };
    if def.full_only && ctx.cfg.framing != FramingMode::Full {
        out.reason = "a desync payload: runs with --framing full".into();
        return out;
    }
    if era != Era::Http {
        let settled = match era {
            Era::Modern => ctx.modern.is_some(),
            _ => ctx.legacy.is_some(),
        };
        if !settled {
            let why = why_not
                .iter()
                .find(|(e, _)| *e == era)
                .map_or("", |(_, m)| m.as_str());
            // A server that does not speak an era gets skips for it (one
            // that speaks none of the eras asked for ends the run: exit 4).
            out.reason = format!("the server does not speak the {} era ({why})", era.as_str());
            return out;
        }
    }
    if let Some(d) = &ctx.down_since {
        out.verdict = Verdict::Inconclusive;
        out.reason = format!("the server stopped answering after {d}");
        return out;
    }
    ctx.evidence.clear();
    let res = (def.run)(ctx, era);
    out.evidence = std::mem::take(&mut ctx.evidence);
    let (verdict, reason) = match res {
        Res::Pass => (Verdict::Pass, String::new()),
        Res::Violation(m) => (
            if def.level == Level::Must {
                Verdict::Fail
            } else {
                Verdict::Warn
            },
            m,
        ),
        Res::Skip(m) => (Verdict::Skip, m),
        Res::Inconclusive(m) => (Verdict::Inconclusive, m),
    };
    out.verdict = verdict;
    out.reason = reason;
    if out
        .evidence
        .iter()
        .any(|e| e.error.as_deref() == Some(ctx::BUDGET_SPENT))
    {
        out.verdict = Verdict::Inconclusive;
        out.reason = ctx::BUDGET_SPENT.into();
        return out;
    }
    if def.hostile && !ctx.alive() {
        out.verdict = Verdict::Fail;
        out.reason = format!(
            "crash: the server stopped answering after this payload{}",
            if out.reason.is_empty() {
                String::new()
            } else {
                format!(" ({})", out.reason)
            }
        );
        ctx.down_since = Some(format!("{} [{}]", def.id, era.as_str()));
    }
    out
}
