//! Issue 31's upstream routes on the Rust fake, scripted as the tools
//! request them (the same routes tests/interop/fake_upstream.py serves):
//! the profile's media, articles and with-replies timelines, `since`
//! (a page with newer posts, and the 204 when none is newer), the About
//! data, the trends and a translated post.

use super::fake_upstream::{Answer, FakeUpstream};
use super::status_lists::bottom;

/// A `since` (Unix seconds) between the fixture timeline's posts: page 1
/// has two newer originals, then an older one that ends the list.
pub const SINCE_SOME: &str = "1786400000";
/// A `since` after every post of page 1: FxTwitter answers 204.
pub const SINCE_NONE: &str = "1786600000";
/// The Japanese post `status-translated.json` translates into English.
pub const TRANSLATED_ID: &str = "2087208847298015300";
/// The post of `status-plain.json` (English, no translation).
pub const PLAIN_ID: &str = "2087208847298015232";

/// Scripts every route of issue 31 (with `profile.json` for the account).
pub fn serve_readers(fake: &FakeUpstream) {
    fake.on(
        "/2/profile/demo_author",
        Answer::fixture(200, "profile.json"),
    );
    for (path, extra, first, end) in [
        (
            "media",
            "",
            "profile-media-page1.json",
            "profile-media-page2-empty.json",
        ),
        (
            "articles",
            "",
            "profile-articles-page1.json",
            "profile-articles-page2-empty.json",
        ),
        (
            "statuses",
            "&with_replies=true",
            "profile-replies-page1.json",
            "profile-replies-page2-empty.json",
        ),
    ] {
        let base = format!("/2/profile/demo_author/{path}");
        fake.on(
            &format!("{base}?count=20{extra}"),
            Answer::fixture(200, first),
        );
        // Past the end X answers the empty page again, its bottom cursor
        // the one just read: the walk ends there.
        let c = bottom(first);
        fake.on(
            &format!("{base}?cursor={c}&count=20{extra}"),
            Answer::fixture(200, end),
        );
    }
    fake.on(
        &format!("/2/profile/demo_author/statuses?count=20&with_replies=false&since={SINCE_SOME}"),
        Answer::fixture(200, "profile-statuses-page1.json"),
    );
    fake.on(
        &format!("/2/profile/demo_author/statuses?count=20&with_replies=false&since={SINCE_NONE}"),
        Answer::raw(204, "application/json", Vec::new()),
    );
    fake.on(
        "/2/profile/demo_author/about",
        Answer::fixture(200, "profile-about.json"),
    );
    fake.on(
        "/2/trends?type=trending&count=50",
        Answer::fixture(200, "trends.json"),
    );
    for ep in ["status", "thread"] {
        fake.on(
            &format!("/2/{ep}/{TRANSLATED_ID}?lang=en"),
            Answer::fixture(200, "status-translated.json"),
        );
        for lang in ["en", "es"] {
            fake.on(
                &format!("/2/{ep}/{PLAIN_ID}?lang={lang}"),
                Answer::fixture(200, "status-plain.json"),
            );
        }
    }
}
