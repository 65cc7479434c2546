//! JUnit XML: a `testsuite` per class and era, a `testcase` per check.
//! `fail` → `<failure>`; `skip` and `inconclusive` → `<skipped>`; a result
//! the baseline expects → `<skipped>` naming the baseline's reason; `warn`
//! passes with `<properties>` saying `verdict=warn`, `level=SHOULD`.

use crate::probe::{check, Report, Verdict, CLASSES};

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // XML 1.0 allows only these controls.
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                o.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => o.push(c),
        }
    }
    o
}

/// The report as JUnit XML.
pub fn to_junit(report: &Report) -> String {
    let mut suites = String::new();
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    let mut total_ms = 0u64;
    for class in CLASSES {
        for era in [
            crate::probe::Era::Modern,
            crate::probe::Era::Legacy,
            crate::probe::Era::Http,
        ] {
            let rs: Vec<_> = report
                .results
                .iter()
                .filter(|r| r.era == era && check(r.id).is_some_and(|d| d.class() == class))
                .collect();
            if rs.is_empty() {
                continue;
            }
            let mut cases = String::new();
            let (mut f, mut s, mut ms) = (0, 0, 0u64);
            for r in &rs {
                let d = check(r.id).expect("catalogue id");
                let t: u64 = r.evidence.iter().map(|e| e.elapsed_ms).sum();
                ms += t;
                cases.push_str(&format!(
                    "    <testcase classname=\"xmd.probe.{class}.{}\" name=\"{}: {}\" time=\"{:.3}\">\n      <properties>\n        <property name=\"level\" value=\"{}\"/>\n        <property name=\"verdict\" value=\"{}\"/>\n        <property name=\"clause\" value=\"{}\"/>\n        <property name=\"url\" value=\"{}\"/>\n      </properties>\n",
                    era.as_str(),
                    r.id,
                    esc(d.title),
                    t as f64 / 1000.0,
                    d.level.as_str(),
                    r.verdict.as_str(),
                    esc(d.clause),
                    esc(d.url),
                ));
                match (r.verdict, &r.baselined) {
                    (Verdict::Fail | Verdict::Warn | Verdict::Inconclusive, Some(b)) => {
                        s += 1;
                        cases.push_str(&format!(
                            "      <skipped message=\"expected by the baseline ({}): {}\"/>\n",
                            r.verdict.as_str(),
                            esc(b)
                        ));
                    }
                    (Verdict::Fail, None) => {
                        f += 1;
                        cases.push_str(&format!(
                            "      <failure message=\"{}\" type=\"{}\">{} &lt;{}&gt;</failure>\n",
                            esc(&r.reason),
                            d.level.as_str(),
                            esc(d.clause),
                            esc(d.url)
                        ));
                    }
                    (Verdict::Skip | Verdict::Inconclusive, None) => {
                        s += 1;
                        cases.push_str(&format!(
                            "      <skipped message=\"{}: {}\"/>\n",
                            r.verdict.as_str(),
                            esc(&r.reason)
                        ));
                    }
                    (Verdict::Warn, None) => {
                        cases.push_str(&format!(
                            "      <system-out>warn (SHOULD): {}</system-out>\n",
                            esc(&r.reason)
                        ));
                    }
                    _ => {}
                }
                cases.push_str("    </testcase>\n");
            }
            tests += rs.len();
            failures += f;
            skipped += s;
            total_ms += ms;
            suites.push_str(&format!(
                "  <testsuite name=\"{class} ({})\" tests=\"{}\" failures=\"{f}\" errors=\"0\" skipped=\"{s}\" time=\"{:.3}\">\n{cases}  </testsuite>\n",
                era.as_str(),
                rs.len(),
                ms as f64 / 1000.0
            ));
        }
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"xmd probe {}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">\n{suites}</testsuites>\n",
        esc(&report.target),
        total_ms as f64 / 1000.0
    )
}
