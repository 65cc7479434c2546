//! `--baseline FILE`: the results a run is expected to have, each with
//! its reason. A JSON document:
//!
//! ```json
//! {"expected": [{"id": "TRANS-13", "era": "legacy", "verdict": "fail",
//!                "reason": "2025-03-26 batches are not supported"}]}
//! ```
//!
//! A result the baseline expects is reported as baselined and does not
//! fail the run; a `fail` (or, with `--fail-on should`, a `warn`) it does
//! not list is a regression (exit 5); an entry that did not occur is
//! reported as stale (fixed since: drop it).

use serde_json::Value;

use super::{check, Era, Report, Verdict};

/// One expected result.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub id: String,
    pub era: Era,
    pub verdict: Verdict,
    pub reason: String,
}

/// Parses a baseline document.
///
/// # Errors
/// Not JSON, an unknown check id, era or verdict, or an entry without a reason.
pub fn parse(text: &str) -> Result<Vec<Expected>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("baseline is not JSON: {e}"))?;
    let list = v
        .get("expected")
        .and_then(Value::as_array)
        .ok_or("baseline: no \"expected\" array")?;
    let mut out = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let id = s("id");
        if check(&id).is_none() {
            return Err(format!("baseline entry {i}: unknown check id {id:?}"));
        }
        let era = Era::parse(&s("era"))
            .ok_or_else(|| format!("baseline entry {i}: era must be modern, legacy or http"))?;
        let verdict = Verdict::parse(&s("verdict"))
            .filter(|v| matches!(v, Verdict::Fail | Verdict::Warn | Verdict::Inconclusive))
            .ok_or_else(|| {
                format!("baseline entry {i}: verdict must be fail, warn or inconclusive")
            })?;
        let reason = s("reason");
        if reason.trim().is_empty() {
            return Err(format!("baseline entry {i} ({id}): a reason is required"));
        }
        out.push(Expected {
            id,
            era,
            verdict,
            reason,
        });
    }
    Ok(out)
}

/// Marks the results the baseline expects and lists its stale entries.
pub fn apply(report: &mut Report, expected: &[Expected]) {
    for r in &mut report.results {
        if let Some(e) = expected
            .iter()
            .find(|e| e.id == r.id && e.era == r.era && e.verdict == r.verdict)
        {
            r.baselined = Some(e.reason.clone());
        }
    }
    report.stale_baseline = expected
        .iter()
        .filter(|e| {
            !report
                .results
                .iter()
                .any(|r| r.id == e.id && r.era == e.era && r.verdict == e.verdict)
        })
        .map(|e| (e.id.clone(), e.era.as_str().to_string()))
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_need_a_known_id_era_flag_verdict_and_a_reason() {
        let ok = r#"{"expected": [{"id": "TRANS-13", "era": "legacy", "verdict": "fail", "reason": "r"}]}"#;
        assert_eq!(
            parse(ok).unwrap(),
            vec![Expected {
                id: "TRANS-13".into(),
                era: Era::Legacy,
                verdict: Verdict::Fail,
                reason: "r".into()
            }]
        );
        let bad = |entry: &str| parse(&format!(r#"{{"expected": [{entry}]}}"#)).unwrap_err();
        assert!(
            bad(r#"{"id": "NOPE-01", "era": "legacy", "verdict": "fail", "reason": "r"}"#)
                .contains("unknown check id")
        );
        assert!(
            bad(r#"{"id": "TRANS-13", "era": "both", "verdict": "fail", "reason": "r"}"#)
                .contains("era must be")
        );
        assert!(
            bad(r#"{"id": "TRANS-13", "era": "legacy", "verdict": "pass", "reason": "r"}"#)
                .contains("verdict must be")
        );
        assert!(
            bad(r#"{"id": "TRANS-13", "era": "legacy", "verdict": "fail", "reason": " "}"#)
                .contains("a reason is required")
        );
        assert!(parse("[]").unwrap_err().contains("no \"expected\" array"));
        assert!(parse("{").unwrap_err().contains("not JSON"));
    }
}
