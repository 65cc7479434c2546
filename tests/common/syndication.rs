//! A fake of X's syndication endpoint on 127.0.0.1, beside the fake
//! FxTwitter: the same recording server (`fake_upstream.rs`), scripted
//! with the fixtures of `tests/fixtures/syndication/` at their exact
//! targets, `id` and `token` included. A request with another token (or
//! another id) gets the endpoint's 404, so a test that gets a post proves
//! the token was right.

use std::path::PathBuf;

use super::fake_upstream::{Answer, FakeUpstream};

/// A plain post by @ada_example (`tweet-plain.json`).
pub const PLAIN_ID: &str = "1901234567890123456";
/// A reply by @bruno_sample with two photos, one with alt text
/// (`tweet-photos.json`).
pub const PHOTOS_ID: &str = "1902345678901234567";
/// A post by @cleo_demo quoting a post with a video (`tweet-quote.json`).
pub const QUOTE_ID: &str = "1903456789012345678";
/// A deleted post (`not-found-tombstone.json`).
pub const GONE_ID: &str = "1904567890123456789";
/// A post by @dara_sample with a GIF (alt text) and a link card
/// (`tweet-gif-card.json`).
pub const GIF_CARD_ID: &str = "1905678901234567890";
/// A reply by @emil_example (its target only in `parent`) with a poll
/// card (`tweet-poll-reply.json`).
pub const POLL_ID: &str = "1906789012345678901";

/// The tokens of the ids above, computed by node with react-tweet's
/// `getToken` (not by xmd): the independent check of the request.
pub const TOKENS: [(&str, &str); 6] = [
    (PLAIN_ID, "4lwwkaqq5fo"),
    (PHOTOS_ID, "4me86w2m2g"),
    (QUOTE_ID, "4m3vw2wo3zt"),
    (GONE_ID, "4m7djxlryun"),
    (GIF_CARD_ID, "4mav7f3zf4"),
    (POLL_ID, "4mecr8p6s3j"),
];

/// The request target for `id`, with its node-computed token.
pub fn target(id: &str) -> String {
    let token = TOKENS
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, t)| *t)
        .unwrap_or_else(|| panic!("no token for {id}"));
    format!("/tweet-result?id={id}&token={token}&lang=en")
}

/// A fixture body by file name.
pub fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/syndication")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// Starts the fake with every fixture at its target; anything else is a
/// 404 with an empty body (the endpoint's answer for an unknown id).
pub fn start() -> FakeUpstream {
    let f = FakeUpstream::start();
    for (id, name) in [
        (PLAIN_ID, "tweet-plain.json"),
        (PHOTOS_ID, "tweet-photos.json"),
        (QUOTE_ID, "tweet-quote.json"),
        (GONE_ID, "not-found-tombstone.json"),
        (GIF_CARD_ID, "tweet-gif-card.json"),
        (POLL_ID, "tweet-poll-reply.json"),
    ] {
        f.on(&target(id), Answer::json(200, &fixture(name)));
    }
    f.handler(|_| Some(Answer::raw(404, "text/plain", Vec::new())));
    f
}

/// How many requests reached the fake syndication endpoint.
pub fn requests(f: &FakeUpstream) -> usize {
    f.count_prefix("/tweet-result")
}
