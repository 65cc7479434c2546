//! `xmd probe` against the real `xmd` (spawned on 127.0.0.1:0, upstream a
//! loopback fake FxTwitter) in both eras: no false failure beyond the
//! baseline (tests/probe/xmd-baseline.json, each entry with its reason);
//! the JSON report validates against docs/probe.schema.json and is the
//! same for the same seed; the SARIF validates against the SARIF 2.1.0
//! schema; the JUnit parses as XML; the exit codes of the CLI.

mod common;
mod util;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::Xmd;
use xmd::probe::report::{to_json, to_junit, to_sarif};
use xmd::probe::{self, baseline, Config, EraChoice, FramingMode, Report, Scope, Verdict};

const ID: &str = "2087208847298015232";
const POST_URL: &str = "https://x.com/demo_author/status/2087208847298015232";
const BASELINE: &str = "tests/probe/xmd-baseline.json";

struct Setup {
    _fake: FakeUpstream,
    xmd: Xmd,
}

fn setup() -> Setup {
    let fake = FakeUpstream::start();
    fake.on(
        &format!("/2/status/{ID}"),
        Answer::fixture(200, "status-plain.json"),
    );
    fake.on(
        &format!("/2/thread/{ID}"),
        Answer::fixture(200, "status-plain.json"),
    );
    let upstream = format!("{}/", fake.base_url());
    let xmd = Xmd::start(&["--upstream", &upstream, "--rate-limit", "0"]);
    Setup { _fake: fake, xmd }
}

impl Setup {
    fn url(&self) -> String {
        format!("http://{}/mcp", self.xmd.addr)
    }
}

fn config(url: &str, seed: u64) -> Config {
    let mut c = Config::new(url);
    c.era = EraChoice::Both;
    c.framing = FramingMode::Full;
    c.seed = seed;
    c.args = Some(json!({"url": POST_URL}));
    c.pace = Duration::ZERO;
    c
}

fn run(url: &str, seed: u64) -> Report {
    probe::run(&config(url, seed)).expect("probe runs")
}

fn with_baseline(mut r: Report) -> Report {
    let b = baseline::parse(&std::fs::read_to_string(BASELINE).unwrap()).unwrap();
    baseline::apply(&mut r, &b);
    r
}

fn set(r: &Report, pred: impl Fn(&xmd::probe::CheckResult) -> bool) -> BTreeSet<String> {
    r.results
        .iter()
        .filter(|x| pred(x))
        .map(|x| format!("{} {} {}", x.id, x.era.as_str(), x.verdict.as_str()))
        .collect()
}

fn strs(a: &[&str]) -> BTreeSet<String> {
    a.iter().map(|s| (*s).to_string()).collect()
}

#[test]
fn xmd_in_both_eras_has_no_false_failure() {
    let s = setup();
    let r = with_baseline(run(&s.url(), 1));
    // One result per check and era it applies to.
    let expected_results: usize = probe::catalogue()
        .iter()
        .map(|d| if d.scope == Scope::Both { 2 } else { 1 })
        .sum();
    assert_eq!(r.results.len(), expected_results);
    assert_eq!(
        r.revisions(),
        vec!["2026-07-28".to_string(), "2025-11-25".to_string()]
    );
    // Flagged only where the baseline says, with its reasons.
    assert_eq!(
        set(&r, |x| x.baselined.is_some()),
        strs(&[
            "TRANS-13 legacy fail",
            "PRIM-10 modern warn",
            "PRIM-10 legacy warn"
        ])
    );
    assert_eq!(
        set(&r, |x| x.baselined.is_none()
            && x.verdict != Verdict::Pass
            && x.verdict != Verdict::Skip),
        BTreeSet::new()
    );
    // Skipped: no x-mcp-header tool, dual-era (GET/DELETE follow the
    // handshake era's rules), no sessions, every primitive declared.
    assert_eq!(
        set(&r, |x| x.verdict == Verdict::Skip),
        strs(&[
            "HDR-14 modern skip",
            "TRANS-08 modern skip",
            "TRANS-09 modern skip",
            "TRANS-11 legacy skip",
            "TRANS-12 legacy skip",
            "PRIM-15 modern skip",
            "PRIM-15 legacy skip"
        ])
    );
    assert!(r.stale_baseline.is_empty(), "{:?}", r.stale_baseline);
    // Score: passed MUSTs / applicable MUSTs; skips never count.
    let all = r.tallies().pop().unwrap().1;
    let musts: Vec<_> = r
        .results
        .iter()
        .filter(|x| probe::check(x.id).unwrap().level == probe::Level::Must)
        .filter(|x| matches!(x.verdict, Verdict::Pass | Verdict::Fail))
        .collect();
    assert_eq!(all.must_applicable, musts.len());
    assert_eq!(
        all.must_passed,
        musts.len() - 1,
        "TRANS-13 legacy is the one MUST failed"
    );
    assert_eq!(all.fail, 1);
    assert_eq!(all.warn, 2);
}

fn without_timings(mut v: Value) -> Value {
    for k in ["startedAt", "finishedAt", "durationMs"] {
        v.as_object_mut().unwrap().remove(k);
    }
    for c in v["checks"].as_array_mut().unwrap() {
        for e in c["evidence"].as_array_mut().unwrap() {
            e.as_object_mut().unwrap().remove("timingMs");
        }
    }
    v
}

#[test]
fn json_report_validates_and_one_seed_gives_one_report() {
    let s = setup();
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string("docs/probe.schema.json").unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("schema compiles");
    let a = to_json(&with_baseline(run(&s.url(), 7)));
    let b = to_json(&with_baseline(run(&s.url(), 7)));
    for doc in [&a, &b] {
        let errors: Vec<String> = v
            .iter_errors(doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    assert_eq!(a["seed"], json!(7));
    assert_eq!(a["tool"]["version"], json!(env!("CARGO_PKG_VERSION")));
    assert_eq!(a["target"]["url"], json!(s.url()));
    assert_eq!(without_timings(a.clone()), without_timings(b));
    // Another seed sends other ids and names.
    let c = to_json(&with_baseline(run(&s.url(), 8)));
    assert_ne!(without_timings(a)["checks"], without_timings(c)["checks"]);
}

#[test]
fn sarif_validates_against_sarif_2_1_0_and_lists_fail_and_warn_only() {
    let s = setup();
    let r = run(&s.url(), 1);
    let sarif = to_sarif(&r);
    let schema: Value =
        serde_json::from_str(include_str!("schemas/sarif-schema-2.1.0.json")).unwrap();
    let v = jsonschema::draft4::new(&schema).expect("SARIF schema compiles");
    let errors: Vec<String> = v
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let results: BTreeSet<String> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            format!(
                "{} {}",
                x["ruleId"].as_str().unwrap(),
                x["level"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(results, strs(&["TRANS-13 error", "PRIM-10 warning"]));
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), probe::catalogue().len());
    for (rule, d) in rules.iter().zip(probe::catalogue()) {
        assert_eq!(rule["id"], json!(d.id));
        assert_eq!(rule["helpUri"], json!(d.url));
    }
    for x in sarif["runs"][0]["results"].as_array().unwrap() {
        let i = x["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], x["ruleId"]);
        let uri = x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert_eq!(uri, format!("{}/mcp", s.xmd.addr).replace(':', "_"));
    }
    // The baseline's results are left out.
    let sarif = to_sarif(&with_baseline(r));
    assert_eq!(sarif["runs"][0]["results"], json!([]));
}

#[test]
fn junit_parses_as_xml_with_a_suite_per_class_and_era() {
    let s = setup();
    let r = run(&s.url(), 1);
    let xml = to_junit(&r);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    let names: BTreeSet<&str> = suites
        .iter()
        .map(|s| s.attribute("name").unwrap())
        .collect();
    assert!(
        names.contains("DISC (modern)")
            && names.contains("DISC (legacy)")
            && names.contains("FRAME (http)")
    );
    let mut cases = 0;
    let mut failures = 0;
    for suite in &suites {
        assert_eq!(suite.tag_name().name(), "testsuite");
        let tc: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(
            suite.attribute("tests").unwrap().parse::<usize>().unwrap(),
            tc.len()
        );
        let f = tc
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
            .count();
        let sk = tc
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("skipped")))
            .count();
        assert_eq!(
            suite
                .attribute("failures")
                .unwrap()
                .parse::<usize>()
                .unwrap(),
            f
        );
        assert_eq!(
            suite
                .attribute("skipped")
                .unwrap()
                .parse::<usize>()
                .unwrap(),
            sk
        );
        cases += tc.len();
        failures += f;
    }
    assert_eq!(cases, r.results.len());
    assert_eq!(failures, 1, "TRANS-13 legacy");
    assert_eq!(
        root.attribute("tests").unwrap().parse::<usize>().unwrap(),
        cases
    );
}

fn xmd_probe(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xmd"))
        .arg("probe")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_exit_codes_and_outputs() {
    let s = setup();
    let url = s.url();
    let dir = std::env::temp_dir().join(format!("xmd-probe-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args_json = format!("{{\"url\":\"{POST_URL}\"}}");
    let base = [
        "--era",
        "both",
        "--framing",
        "off",
        "--args",
        args_json.as_str(),
        "--pace",
        "0",
    ];
    // The baseline expects xmd's two differences: exit 0.
    let mut a: Vec<&str> = vec![&url];
    a.extend(base);
    a.extend(["--baseline", BASELINE]);
    let (code, out, _) = xmd_probe(&a);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("FAIL*         TRANS-13  legacy  MUST"),
        "{out}"
    );
    // No baseline: the MUST failure exits 1.
    let mut a: Vec<&str> = vec![&url];
    a.extend(base);
    let (code, _, err) = xmd_probe(&a);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("fail TRANS-13 [legacy]"), "{err}");
    // --fail-on never: 0; --fail-on should with the baseline: 0 (the warns are expected).
    let mut a: Vec<&str> = vec![&url];
    a.extend(base);
    a.extend(["--fail-on", "never"]);
    assert_eq!(xmd_probe(&a).0, 0);
    // A baseline that expects nothing: the failure is a regression, 5.
    let empty = dir.join("empty.json");
    std::fs::write(&empty, r#"{"expected": []}"#).unwrap();
    let mut a: Vec<&str> = vec![&url];
    a.extend(base);
    a.extend(["--baseline", empty.to_str().unwrap()]);
    assert_eq!(xmd_probe(&a).0, 5);
    // An entry without a reason is a usage error.
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"expected": [{"id": "TRANS-13", "era": "legacy", "verdict": "fail", "reason": ""}]}"#,
    )
    .unwrap();
    let mut a: Vec<&str> = vec![&url];
    a.extend(["--baseline", bad.to_str().unwrap()]);
    let (code, _, err) = xmd_probe(&a);
    assert_eq!(code, 2);
    assert!(err.contains("a reason is required"), "{err}");
    // --out and --format json; userinfo and query are not reported.
    let out_file = dir.join("r.json");
    let secret_url = format!("http://user:pw@{}/mcp?token=secret", s.xmd.addr);
    let (code, stdout, _) = xmd_probe(&[
        &secret_url,
        "--class",
        "disc",
        "--format",
        "json",
        "--out",
        out_file.to_str().unwrap(),
        "--header",
        "Authorization: Bearer hunter2",
    ]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["target"]["url"], json!(url));
    assert!(!text.contains("hunter2") && !text.contains("secret") && !text.contains("user:pw"));
    assert!(text.contains("Authorization: <redacted>"));
    assert!(v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["class"] == "DISC"));
    // The request budget: past it the checks end inconclusive, which fails nothing.
    let (code, stdout, _) =
        xmd_probe(&[&url, "--class", "rpc", "--budget", "4", "--format", "json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let spent = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["verdict"] == "inconclusive" && c["reason"] == "request budget spent (--budget)"
        })
        .count();
    assert!(spent >= 10, "{spent} checks ran out of budget");
    // Usage errors and an unreachable server.
    assert_eq!(xmd_probe(&["https://127.0.0.1/mcp"]).0, 2);
    assert_eq!(xmd_probe(&[&url, "--era", "sideways"]).0, 2);
    assert_eq!(xmd_probe(&[]).0, 2);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let (code, _, err) = xmd_probe(&[&format!("http://{closed}/mcp"), "--timeout", "2"]);
    assert_eq!(code, 4, "{err}");
    // --list: every check once, with its level and clause.
    let (code, out, _) = xmd_probe(&["--list", "--format", "json"]);
    assert_eq!(code, 0);
    let list: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert!(list.len() >= 53);
    let ids: BTreeSet<&str> = list.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), list.len());
    let re = regex::Regex::new("^(DISC|HDR|TRANS|RPC|PRIM|FRAME)-[0-9]{2}$").unwrap();
    for c in &list {
        assert!(re.is_match(c["id"].as_str().unwrap()));
        assert!(["MUST", "SHOULD"].contains(&c["level"].as_str().unwrap()));
        assert!(c["url"].as_str().unwrap().starts_with("https://"));
        assert!(!c["clause"].as_str().unwrap().is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
