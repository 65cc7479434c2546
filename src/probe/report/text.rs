//! The terminal report.

use crate::client::term::escape_controls;
use crate::probe::{check, Report, Verdict};

/// The report as text: one line per result, the clause under each fail
/// and warn, then the scores.
pub fn to_text(report: &Report) -> String {
    let mut out = format!(
        "xmd probe {} — seed {}, framing {}, {} requests\n",
        report.target,
        report.seed,
        report.framing.as_str(),
        report.requests
    );
    for e in &report.eras {
        let caps: Vec<&str> = e
            .capabilities
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        out.push_str(&format!(
            "era {}: {} (capabilities: {})\n",
            e.era.as_str(),
            e.protocol_version,
            if caps.is_empty() {
                "none".to_string()
            } else {
                caps.join(", ")
            }
        ));
    }
    out.push('\n');
    for r in &report.results {
        let d = check(r.id).expect("catalogue id");
        let label = match (r.verdict, &r.baselined) {
            (_, Some(_)) => format!("{}*", r.verdict.as_str().to_uppercase()),
            (v, None) => v.as_str().to_uppercase(),
        };
        out.push_str(&format!(
            "{label:<13} {:<9} {:<7} {:<6} {}\n",
            r.id,
            r.era.as_str(),
            d.level.as_str(),
            d.title
        ));
        if r.verdict != Verdict::Pass && !r.reason.is_empty() {
            out.push_str(&format!("              {}\n", escape_controls(&r.reason)));
        }
        if matches!(r.verdict, Verdict::Fail | Verdict::Warn) {
            out.push_str(&format!("              {} <{}>\n", d.clause, d.url));
            if let Some(b) = &r.baselined {
                out.push_str(&format!("              expected by the baseline: {b}\n"));
            }
        }
    }
    out.push('\n');
    for (c, t) in report.tallies() {
        out.push_str(&format!(
            "{c:<8} MUST {}/{} ({:.1}%)  pass {} fail {} warn {} skip {} inconclusive {}\n",
            t.must_passed,
            t.must_applicable,
            t.score() * 100.0,
            t.pass,
            t.fail,
            t.warn,
            t.skip,
            t.inconclusive
        ));
    }
    for (id, era) in &report.stale_baseline {
        out.push_str(&format!(
            "baseline entry {id} [{era}] did not occur (fixed? drop it)\n"
        ));
    }
    let all = report.tallies().pop().expect("overall").1;
    let unverified = all.skip + all.inconclusive;
    out.push_str(&if all.fail == 0 {
        format!("verdict: conformant on what could be checked ({unverified} not verified)\n")
    } else {
        format!(
            "verdict: {} MUST failure(s) ({unverified} not verified)\n",
            all.fail
        )
    });
    out
}
