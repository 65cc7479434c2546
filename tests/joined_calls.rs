//! Identical tool calls that wait together for one upstream answer (issue
//! 28, the event-loop upstream): their upstream requests are joined into
//! one, and once the answer is in, the call a worker renders first is
//! stored in the result cache and the others replay it (`"cache": "hit"`),
//! as an identical call made later would, instead of each rendering the
//! same answer again. 10,000 calls over 2,500 posts (bench row (g)) are 4
//! renders per post without it.
//!
//! Oracle: the wire. Every call is answered 200 with the same text and the
//! same `structuredContent` but for its `cache` member; the upstream saw
//! one request; at most one call per worker rendered (a worker takes the
//! next call only after storing its result), so misses ≤ `--workers`.

mod common;
mod util;

use std::thread;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::Value;
use util::*;

const POST_ID: &str = "2087208847298015232";

fn call(x: &Xmd, id: usize) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"https://x.com/demo_author/status/{POST_ID}","thread":"off"}}}}}}"#
    );
    let r = roundtrip(
        x,
        &post(
            &x.host(),
            &[
                "Content-Type: application/json",
                "Accept: application/json, text/event-stream",
                "MCP-Protocol-Version: 2025-11-25",
            ],
            &body,
        ),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["id"], id, "{v}");
    v["result"].clone()
}

fn joined(calls: usize, workers: usize) -> Result<(), TestCaseError> {
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/status/{POST_ID}"),
        Answer::fixture(200, "status-plain.json").delay(Duration::from_millis(400)),
    );
    let base = up.base_url();
    let w = workers.to_string();
    let x = Xmd::start(&[
        "--upstream",
        &base,
        "--upstream-io",
        "loop",
        "--workers",
        &w,
        "--rate-limit",
        "0",
        "--max-connections-per-ip",
        "0",
    ]);
    let results: Vec<Value> = thread::scope(|s| {
        let handles: Vec<_> = (0..calls)
            .map(|i| {
                s.spawn({
                    let x = &x;
                    move || call(x, i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    prop_assert_eq!(up.count_prefix("/2/status/"), 1);
    let mut misses = 0;
    let first = &results[0];
    for r in &results {
        prop_assert_eq!(&r["isError"], false, "{}", r);
        prop_assert_eq!(&r["content"], &first["content"]);
        let mut structured = r["structuredContent"].clone();
        let mut want = first["structuredContent"].clone();
        let cache = structured.as_object_mut().unwrap().remove("cache").unwrap();
        want.as_object_mut().unwrap().remove("cache");
        prop_assert_eq!(&structured, &want);
        match cache.as_str() {
            Some("miss") => misses += 1,
            Some("hit") => {}
            other => prop_assert!(false, "cache {other:?}"),
        }
    }
    prop_assert!(
        (1..=workers).contains(&misses),
        "{misses} of {calls} calls rendered with {workers} workers"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn identical_calls_waiting_together_are_rendered_once_per_worker_at_most(
        calls in 2usize..24,
        workers in 1usize..4,
    ) {
        joined(calls, workers)?;
    }
}
