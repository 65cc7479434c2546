//! The JSON report (schema: `docs/probe.schema.json`, version
//! [`SCHEMA_VERSION`](crate::probe::SCHEMA_VERSION)).

use serde_json::{json, Map, Value};

use super::rfc3339;
use crate::probe::wire::{excerpt, Exchange};
use crate::probe::{check, Report, Tally, SCHEMA_VERSION};

/// Response headers left out of evidence: `Date` changes every run (the
/// JSON of two runs with one seed differs only in timings and timestamps).
const VOLATILE_HEADERS: [&str; 1] = ["date"];

fn tally(t: &Tally) -> Value {
    json!({
        "pass": t.pass, "fail": t.fail, "warn": t.warn, "skip": t.skip,
        "inconclusive": t.inconclusive,
        "mustPassed": t.must_passed, "mustApplicable": t.must_applicable,
        "score": (t.score() * 10_000.0).round() / 10_000.0,
    })
}

fn evidence(e: &Exchange) -> Value {
    let mut m = Map::new();
    m.insert("request".into(), json!(e.request));
    m.insert("requestBytes".into(), json!(e.request_len));
    m.insert("timingMs".into(), json!(e.elapsed_ms));
    if let Some(r) = &e.response {
        m.insert("status".into(), json!(r.status));
        let headers: Vec<Value> = r
            .headers
            .iter()
            .filter(|(n, _)| !VOLATILE_HEADERS.contains(&n.to_ascii_lowercase().as_str()))
            .map(|(n, v)| {
                let v = if n.eq_ignore_ascii_case("mcp-session-id")
                    || n.eq_ignore_ascii_case("set-cookie")
                {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                json!([n, v])
            })
            .collect();
        m.insert("headers".into(), Value::Array(headers));
        m.insert("bodyExcerpt".into(), json!(excerpt(&r.body)));
        m.insert("bodyBytes".into(), json!(r.body.len()));
    }
    if let Some(err) = &e.error {
        m.insert("error".into(), json!(err));
    }
    Value::Object(m)
}

/// The report as a JSON value.
pub fn to_json(report: &Report) -> Value {
    let tallies = report.tallies();
    let mut classes = Map::new();
    let mut overall = Value::Null;
    for (c, t) in &tallies {
        if *c == "overall" {
            overall = tally(t);
        } else {
            classes.insert((*c).to_string(), tally(t));
        }
    }
    let checks: Vec<Value> = report
        .results
        .iter()
        .map(|r| {
            let d = check(r.id).expect("catalogue id");
            json!({
                "id": r.id,
                "era": r.era.as_str(),
                "class": d.class(),
                "level": d.level.as_str(),
                "title": d.title,
                "clause": d.clause,
                "url": d.url,
                "verdict": r.verdict.as_str(),
                "reason": r.reason,
                "baselined": r.baselined,
                "evidence": r.evidence.iter().map(evidence).collect::<Vec<_>>(),
            })
        })
        .collect();
    let duration = report
        .finished
        .duration_since(report.started)
        .unwrap_or_default()
        .as_millis() as u64;
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "xmd probe", "version": env!("CARGO_PKG_VERSION")},
        "target": {"url": report.target, "kind": match report.target_kind {
            crate::probe::TargetKind::Server => "server",
            crate::probe::TargetKind::Gateway => "gateway",
        }},
        "seed": report.seed,
        "framing": report.framing.as_str(),
        "startedAt": rfc3339(report.started),
        "finishedAt": rfc3339(report.finished),
        "durationMs": duration,
        "revisionsTested": report.revisions(),
        "eras": report.eras.iter().map(|e| json!({
            "era": e.era.as_str(),
            "protocolVersion": e.protocol_version,
            "capabilities": e.capabilities,
            "serverInfo": e.server_info,
        })).collect::<Vec<_>>(),
        "requests": report.requests,
        "summary": {"overall": overall, "classes": classes},
        "staleBaseline": report.stale_baseline.iter().map(|(id, era)| json!({"id": id, "era": era})).collect::<Vec<_>>(),
        "checks": checks,
    })
}
