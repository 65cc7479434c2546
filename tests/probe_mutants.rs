//! The mutant corpus of `xmd probe` (issue 29): a proxy in front of a real
//! `xmd serve` breaks exactly one rule per mutant (tests/probe_support/),
//! and the probe must flag that mutant with its own check and with no
//! unrelated MUST. The control (the proxy changing nothing) must be flagged
//! for nothing beyond xmd's baseline. The catch matrix is printed.

mod common;
mod probe_support;
mod util;

use std::collections::BTreeSet;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use probe_support::corpus::mutants;
use probe_support::{Mutant, Proxy};
use serde_json::json;
use util::Xmd;
use xmd::probe::{self, baseline, Config, EraChoice, FramingMode, Level, Verdict};

const ID: &str = "2087208847298015232";
const POST_URL: &str = "https://x.com/demo_author/status/2087208847298015232";

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

fn config(url: &str, framing: FramingMode) -> Config {
    let mut c = Config::new(url);
    c.era = EraChoice::Both;
    c.framing = framing;
    c.args = Some(json!({"url": POST_URL}));
    c.timeout = Duration::from_secs(3);
    c.pace = Duration::ZERO;
    c
}

fn expected() -> Vec<baseline::Expected> {
    baseline::parse(include_str!("probe/xmd-baseline.json")).unwrap()
}

/// (check, level, verdict) of every flag (fail or warn) the baseline does not expect.
fn flags(url: &str, framing: FramingMode) -> Vec<(String, String, Level)> {
    let mut r = probe::run(&config(url, framing)).expect("probe runs");
    baseline::apply(&mut r, &expected());
    r.results
        .iter()
        .filter(|x| matches!(x.verdict, Verdict::Fail | Verdict::Warn) && x.baselined.is_none())
        .map(|x| {
            (
                x.id.to_string(),
                format!("{} {}: {}", x.era.as_str(), x.verdict.as_str(), x.reason),
                probe::check(x.id).unwrap().level,
            )
        })
        .collect()
}

#[test]
fn every_mutant_is_caught_by_its_own_check_and_no_unrelated_must() {
    let s = setup();
    let upstream = format!("http://{}/mcp", s.xmd.addr);
    // The control: the proxy changing nothing is flagged for nothing.
    let control = Proxy::start(&upstream, Mutant::base("control", &[]));
    let t = std::time::Instant::now();
    let c = flags(&control.url, FramingMode::Full);
    eprintln!("control: {} ms", t.elapsed().as_millis());
    assert!(c.is_empty(), "the unchanged proxy was flagged: {c:#?}");
    // The control with legacy sessions that are issued and enforced.
    let sessions = Proxy::start(
        &upstream,
        Mutant {
            session: Some("sess-1"),
            enforce_session: true,
            ..Mutant::base("sessions", &[])
        },
    );
    let c = flags(&sessions.url, FramingMode::Off);
    assert!(c.is_empty(), "the session proxy was flagged: {c:#?}");

    let all = mutants();
    let mut matrix = Vec::new();
    let mut problems = Vec::new();
    let mut own: BTreeSet<&str> = BTreeSet::new();
    // Two at a time (the machine has two cores); results in corpus order.
    let runs: Vec<Vec<(String, String, Level)>> = std::thread::scope(|sc| {
        let handles: Vec<_> = all
            .chunks(all.len().div_ceil(2))
            .map(|part| {
                let upstream = upstream.clone();
                sc.spawn(move || {
                    part.iter()
                        .map(|mu| {
                            let framing = if mu.catches[0].starts_with("FRAME") {
                                FramingMode::Full
                            } else {
                                FramingMode::Off
                            };
                            let p = Proxy::start(&upstream, *mu);
                            let t = std::time::Instant::now();
                            let got = flags(&p.url, framing);
                            eprintln!(
                                "{:<45} {:>6} ms {:?}",
                                mu.name,
                                t.elapsed().as_millis(),
                                got.iter().map(|g| &g.0).collect::<Vec<_>>()
                            );
                            got
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (mu, got) in all.iter().zip(runs) {
        let ids: BTreeSet<&str> = got.iter().map(|(i, _, _)| i.as_str()).collect();
        matrix.push(format!(
            "{:<45} {:<9} caught by {:?}",
            mu.name, mu.catches[0], ids
        ));
        if !ids.contains(mu.catches[0]) {
            problems.push(format!(
                "{}: not caught by {} (flags: {got:?})",
                mu.name, mu.catches[0]
            ));
        }
        for (id, why, level) in &got {
            if *level == Level::Must && !mu.catches.contains(&id.as_str()) {
                problems.push(format!("{}: unrelated MUST {id} flagged: {why}", mu.name));
            }
        }
        own.insert(mu.catches[0]);
    }
    println!(
        "catch matrix ({} mutants):\n{}",
        all.len(),
        matrix.join("\n")
    );
    assert!(problems.is_empty(), "{problems:#?}");
    // Every check has a mutant, except the two xmd itself breaks (its
    // baseline: TRANS-13, PRIM-10), caught against xmd in tests/probe_xmd.rs.
    let missing: Vec<&str> = probe::catalogue()
        .iter()
        .map(|d| d.id)
        .filter(|id| !own.contains(id) && !["TRANS-13", "PRIM-10"].contains(id))
        .collect();
    assert_eq!(missing, Vec::<&str>::new(), "checks without a mutant");
}
