//! Multi-page upstream fixtures generated in code: a 5-page profile
//! timeline (answering real and forged Thrift cursors the way X does), a
//! 5-page followers list and a 5-page search, each followed by the empty
//! page that ends it.

use serde_json::{json, Value};
use xmd::x::cursor::TimelineCursor;

use super::fake_upstream::{Answer, FakeUpstream};

/// Rows per upstream page.
pub const PAGE_ROWS: usize = 9;
/// Upstream pages before the empty one.
pub const PAGES: usize = 5;
/// `issuedAt` of every generated timeline cursor.
pub const ISSUED_AT: i64 = 2_087_000_000_000;
/// First (newest) generated id.
pub const TOP_ID: u64 = 2_087_500_000_000_000_000;

/// A status row by `handle` (or a repost by `handle` of `other`'s post).
pub fn status(id: u64, author: &str, text: &str, extra: Value) -> Value {
    let mut s = json!({
        "type": "status", "id": id.to_string(),
        "url": format!("https://x.com/{author}/status/{id}"),
        "text": text, "created_at": "Tue Aug 11 16:05:42 +0000 2026", "created_timestamp": 1786464342,
        "likes": 1, "reposts": 2, "replies": 3, "quotes": 0, "bookmarks": null, "views": null,
        "author": user(id / 1000, author), "replying_to": null, "reposted_by": null, "media": {},
        "provider": "twitter"
    });
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    s
}

/// A user object.
pub fn user(id: u64, handle: &str) -> Value {
    json!({
        "screen_name": handle, "url": format!("https://x.com/{handle}"), "id": id.to_string(),
        "followers": id % 1000, "following": 1, "likes": 0, "media_count": 0, "statuses": 1,
        "name": format!("User {handle}"), "description": "", "location": "",
        "banner_url": null, "avatar_url": null, "joined": "Wed May 01 12:00:00 +0000 2019",
        "protected": false, "website": null,
        "verification": {"verified": false, "verified_at": null, "type": null}, "type": "profile"
    })
}

/// The whole generated timeline of `demo_author`, newest first, and the
/// ids a profile must show (originals only), in order.
pub fn profile_rows() -> (Vec<Value>, Vec<String>) {
    let mut rows = Vec::new();
    let mut want = Vec::new();
    for i in 0..(PAGES * PAGE_ROWS) as u64 {
        let id = TOP_ID - i * 1_000_000;
        let row = match i % 5 {
            1 => status(
                id,
                "sample_dev",
                &format!("repost {i}"),
                json!({"reposted_by": {"id": "1", "name": "Demo Author", "screen_name": "demo_author"}}),
            ),
            3 => status(
                id,
                "demo_author",
                &format!("self reply {i}"),
                json!({"replying_to": {"screen_name": "demo_author", "status": (id + 7).to_string()}}),
            ),
            _ => {
                want.push(id.to_string());
                status(id, "demo_author", &format!("original post {i}"), json!({}))
            }
        };
        rows.push(row);
    }
    (rows, want)
}

fn timeline_cursor(sort_index: &str, direction: i32) -> String {
    TimelineCursor {
        issued_at: ISSUED_AT,
        sort_index: sort_index.to_string(),
        direction,
    }
    .encode()
}

fn query_param<'a>(target: &'a str, name: &str) -> Option<&'a str> {
    let q = target.split_once('?')?.1;
    q.split('&')
        .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
}

/// Serves the generated timeline like X: a page is the next `PAGE_ROWS`
/// rows below the cursor's sortIndex (real or forged); past the end an
/// empty page that still carries cursors.
pub fn serve_profile_timeline(fake: &FakeUpstream) {
    let (rows, _) = profile_rows();
    fake.on(
        "/2/profile/demo_author",
        Answer::fixture(200, "profile.json"),
    );
    fake.handler(move |target| {
        let path = target.split('?').next()?;
        if path != "/2/profile/demo_author/statuses" {
            return None;
        }
        assert_eq!(query_param(target, "count"), Some("20"), "{target}");
        assert_eq!(query_param(target, "with_replies"), Some("false"), "{target}");
        let below: u64 = match query_param(target, "cursor") {
            None => u64::MAX,
            Some(c) => TimelineCursor::decode(c).expect("a Thrift cursor").sort_index.parse().unwrap(),
        };
        let page: Vec<Value> = rows
            .iter()
            .filter(|r| r["id"].as_str().unwrap().parse::<u64>().unwrap() < below)
            .take(PAGE_ROWS)
            .cloned()
            .collect();
        let (top, bottom) = match (page.first(), page.last()) {
            (Some(f), Some(l)) => (f["id"].as_str().unwrap().to_string(), l["id"].as_str().unwrap().to_string()),
            _ => ("1".to_string(), "1".to_string()),
        };
        let body = json!({"code": 200, "results": page, "cursor": {"top": timeline_cursor(&top, 1), "bottom": timeline_cursor(&bottom, 2)}});
        Some(Answer::json(200, &body.to_string()))
    });
}

/// Scripts a 5-page followers list (plus the empty end page) and returns
/// the user ids in order.
pub fn serve_followers(fake: &FakeUpstream, which: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = String::new();
    for p in 0..=PAGES {
        let users: Vec<Value> = if p < PAGES {
            (0..PAGE_ROWS)
                .map(|i| {
                    let id = 900_000 + (p * PAGE_ROWS + i) as u64;
                    ids.push(id.to_string());
                    user(id, &format!("fan_{p}_{i}"))
                })
                .collect()
        } else {
            Vec::new()
        };
        let bottom = (p < PAGES).then(|| {
            format!(
                "{}|{}",
                2087000000000000000u64 - p as u64,
                2087400000000000000u64 + p as u64
            )
        });
        let body = json!({"code": 200, "results": users, "cursor": {"top": if p < PAGES { json!(format!("-1|{p}")) } else { Value::Null }, "bottom": bottom}});
        let target = if cursor.is_empty() {
            format!("/2/profile/demo_author/{which}?count=20")
        } else {
            format!(
                "/2/profile/demo_author/{which}?cursor={}&count=20",
                cursor.replace('|', "%7C")
            )
        };
        fake.on(&target, Answer::json(200, &body.to_string()));
        cursor = bottom.unwrap_or_default();
    }
    ids
}

/// Scripts a 5-page search for `q` (form-encoded as `q_enc`) on the
/// upstream `feed` and returns (all ids, ids of posts with a photo).
pub fn serve_search(fake: &FakeUpstream, q_enc: &str, feed: &str) -> (Vec<String>, Vec<String>) {
    let (mut ids, mut photo_ids) = (Vec::new(), Vec::new());
    let mut cursor = String::new();
    for p in 0..=PAGES {
        let mut posts = Vec::new();
        if p < PAGES {
            for i in 0..PAGE_ROWS {
                let n = (p * PAGE_ROWS + i) as u64;
                let id = TOP_ID - 7 - n * 1_000_000;
                ids.push(id.to_string());
                let media = if n % 3 == 0 {
                    photo_ids.push(id.to_string());
                    json!({"all": [{"type": "photo", "url": format!("https://pbs.twimg.com/media/P{n}.jpg?name=orig"), "width": 10, "height": 10}],
                           "photos": [{"type": "photo", "url": format!("https://pbs.twimg.com/media/P{n}.jpg?name=orig"), "width": 10, "height": 10}]})
                } else if n % 3 == 1 {
                    json!({"all": [{"type": "video", "url": format!("https://video.twimg.com/V{n}.mp4"), "thumbnail_url": "https://pbs.twimg.com/t.jpg"}]})
                } else {
                    json!({})
                };
                posts.push(status(
                    id,
                    &format!("author_{n}"),
                    &format!("search hit {n} <b>"),
                    json!({"media": media}),
                ));
            }
        }
        let bottom = (p < PAGES).then(|| format!("DAADDAABCgABHPeTsMXAEAAK{p}AAIc95Owx-_{p}"));
        let body =
            json!({"code": 200, "results": posts, "cursor": {"top": "DAADtop", "bottom": bottom}});
        let target = if cursor.is_empty() {
            format!("/2/search?q={q_enc}&feed={feed}&count=20")
        } else {
            format!("/2/search?q={q_enc}&feed={feed}&cursor={cursor}&count=20")
        };
        fake.on(&target, Answer::json(200, &body.to_string()));
        cursor = bottom.unwrap_or_default();
    }
    (ids, photo_ids)
}
