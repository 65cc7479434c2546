//! The JSON writer (`xmd::json::write`, issue #15) against its oracle,
//! serde_json's own serializer with the same escapes
//! (`xmd::json::write_by_serde_json`): every fixture read through the
//! typed model (posts, profiles, list pages) and as a `Value` is written
//! byte for byte alike.

use std::path::Path;

use xmd::x::model::parse::parse;
use xmd::x::model::status::{Page, Status};
use xmd::x::model::user::User;

fn both<T: serde::Serialize>(value: &T) -> (String, String) {
    let mut by_serde = Vec::new();
    xmd::json::write_by_serde_json(&mut by_serde, value);
    let ours = String::from_utf8(xmd::json::to_vec(value)).unwrap();
    (ours, String::from_utf8(by_serde).unwrap())
}

#[test]
fn every_fixture_is_written_as_serde_json_writes_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fxtwitter");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    let mut typed = 0;
    for path in &files {
        let body = std::fs::read(path).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let (ours, oracle) = both(&value);
        assert_eq!(ours, oracle, "{}", path.display());
        if let Ok(page) = parse::<Page<Status>>(&body, "page") {
            let (ours, oracle) = both(&page.results);
            assert_eq!(ours, oracle, "{}", path.display());
            typed += 1;
        }
        if let Some(tweet) = value.get("tweet") {
            let status: Status = serde_json::from_value(tweet.clone()).unwrap();
            let (ours, oracle) = both(&status);
            assert_eq!(ours, oracle, "{}", path.display());
            typed += 1;
        }
        if let Some(user) = value.get("user") {
            let user: User = serde_json::from_value(user.clone()).unwrap();
            let (ours, oracle) = both(&user);
            assert_eq!(ours, oracle, "{}", path.display());
            typed += 1;
        }
    }
    assert!(typed >= 10, "{typed} typed reads");
}
