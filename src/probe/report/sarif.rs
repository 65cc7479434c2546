//! SARIF 2.1.0: one result per `fail` (level `error`) and `warn` (level
//! `warning`) the baseline does not expect; `ruleId` is the check id,
//! `helpUri` its clause. The location is a repository-relative
//! pseudo-path of host and path (GitHub code scanning takes no other URI
//! scheme); `partialFingerprints` hash the check id, era and target.

use serde_json::{json, Value};

use super::fnv1a;
use crate::probe::{catalogue, check, Report, Verdict};

/// The pseudo-path: `host_port/path` (no scheme, no colon).
fn pseudo_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let p = rest.replace([':', '[', ']'], "_");
    if p.ends_with('/') {
        format!("{p}index")
    } else {
        p
    }
}

/// The report as a SARIF log.
pub fn to_sarif(report: &Report) -> Value {
    let rules: Vec<Value> = catalogue()
        .iter()
        .map(|d| {
            json!({
                "id": d.id,
                "shortDescription": {"text": d.title},
                "fullDescription": {"text": format!("{} ({})", d.title, d.clause)},
                "helpUri": d.url,
                "help": {"text": d.clause},
                "defaultConfiguration": {"level": if d.level == crate::probe::Level::Must { "error" } else { "warning" }},
                "properties": {"level": d.level.as_str(), "class": d.class()},
            })
        })
        .collect();
    let uri = pseudo_path(&report.target);
    let results: Vec<Value> = report
        .results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Fail | Verdict::Warn) && r.baselined.is_none())
        .map(|r| {
            let d = check(r.id).expect("catalogue id");
            let index = catalogue().iter().position(|c| c.id == r.id).unwrap_or(0);
            json!({
                "ruleId": r.id,
                "ruleIndex": index,
                "level": if r.verdict == Verdict::Fail { "error" } else { "warning" },
                "message": {"text": format!("[{}] {}: {} ({})", r.era.as_str(), d.title, r.reason, d.clause)},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
                "partialFingerprints": {"xmdProbe/v1": fnv1a(&[r.id, r.era.as_str(), &report.target])},
                "properties": {"era": r.era.as_str(), "levelKeyword": d.level.as_str()},
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "xmd probe",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
            "properties": {"target": report.target, "seed": report.seed},
        }],
    })
}
