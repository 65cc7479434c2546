//! The quotes and reposts lists of the fixture post (upstream.md §6.1) on
//! the Rust fake, scripted as the tools request them: the same routes
//! tests/interop/fake_upstream.py serves.

use super::fake_upstream::{fixture, Answer, FakeUpstream};

/// The post whose lists the fixtures record (`status-plain.json`).
pub const LIST_POST: &str = "2087208847298015232";
/// A post whose lists answer the empty `404` (X gave no timeline).
pub const NO_TIMELINE_ID: &str = "2086000000000000404";
/// A post whose lists answer the `500` failure.
pub const FAILED_LIST_ID: &str = "2086000000000000500";

/// The bottom cursor of a fixture page, as X sent it.
pub fn bottom(name: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(&fixture(name)).unwrap();
    v["cursor"]["bottom"].as_str().unwrap().to_string()
}

/// An upstream cursor as the tools write it in a query (`+`, `/`, `=`
/// percent-encoded).
pub fn query_encode(c: &str) -> String {
    c.replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D")
}

/// Scripts `which` (`quotes` or `reposts`) of [`LIST_POST`]: page 1, 2
/// and the empty page 3 by cursor, and the 404, 500 and 400 bodies.
pub fn serve_status_list(fake: &FakeUpstream, which: &str) {
    let base = format!("/2/status/{LIST_POST}/{which}");
    fake.on(
        &format!("{base}?count=20"),
        Answer::fixture(200, &format!("{which}-page1.json")),
    );
    // Past the end X answers the empty page again (its bottom cursor is
    // the one just read: the walk ends there).
    for (from, to) in [(1, "page2"), (2, "page3-empty"), (3, "page3-empty")] {
        let name = if from == 3 {
            format!("{which}-page3-empty.json")
        } else {
            format!("{which}-page{from}.json")
        };
        let c = query_encode(&bottom(&name));
        fake.on(
            &format!("{base}?cursor={c}&count=20"),
            Answer::fixture(200, &format!("{which}-{to}.json")),
        );
    }
    fake.on(
        &format!("/2/status/{NO_TIMELINE_ID}/{which}?count=20"),
        Answer::fixture(404, &format!("{which}-404-no-timeline.json")),
    );
    fake.on(
        &format!("/2/status/{FAILED_LIST_ID}/{which}?count=20"),
        Answer::fixture(500, &format!("{which}-500-failed.json")),
    );
}
