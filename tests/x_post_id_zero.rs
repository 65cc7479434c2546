//! Post id 0 names no post (issue #32, item 7): every spelling of zero
//! (`0` to twenty `0`s) is refused with the product's bad-argument error
//! wherever a post id is accepted (the `id` argument and the `url`
//! argument of the three tools that name a post, the REST routes), and
//! nothing reaches the upstream. The oracle is the rule: a snowflake is a
//! positive u64. One past the zeros (`…01`) is still accepted.

mod common;
mod util;

use common::fake_upstream::FakeUpstream;
use serde_json::json;
use util::{roundtrip, Xmd};
use xmd::x::tools::{PrepareError, Tools};

const TOOLS: [&str; 3] = ["x_md_get_post", "x_md_get_quotes", "x_md_get_reposts"];

fn zeros() -> impl Iterator<Item = String> {
    (1..=20).map(|n| "0".repeat(n))
}

#[test]
fn every_spelling_of_zero_is_a_bad_argument_of_every_tool() {
    for tool in TOOLS {
        for z in zeros() {
            let by_id = Tools::prepare(tool, Some(&json!({"handle": "a", "id": z})));
            match by_id {
                Err(PrepareError::InvalidArguments(m)) => assert_eq!(
                    m,
                    "`id` must be a string of 1 to 20 decimal digits (at most \
                     18446744073709551615, not 0), e.g. \"1800000000000000001\" (send it \
                     quoted: JSON numbers cannot hold post ids exactly)",
                    "{tool} {z}"
                ),
                other => panic!("{tool} {z}: {:?}", other.map(|_| ())),
            }
            let url = format!("https://x.com/a/status/{z}");
            let by_url = Tools::prepare(tool, Some(&json!({"url": url})));
            match by_url {
                Err(PrepareError::InvalidArguments(m)) => {
                    assert!(
                        m.ends_with(&format!("`{z}` is not a valid post id")),
                        "{tool}: {m}"
                    )
                }
                other => panic!("{tool} {url}: {:?}", other.map(|_| ())),
            }
        }
        // The smallest post id, with and without leading zeros, is taken.
        for one in ["1", "01", "00000000000000000001"] {
            assert!(Tools::prepare(tool, Some(&json!({"handle": "a", "id": one}))).is_ok());
        }
    }
}

#[test]
fn every_spelling_of_zero_is_a_400_on_every_route() {
    let up = FakeUpstream::start();
    let base = up.base_url();
    let x = Xmd::start(&["--upstream", base.as_str()]);
    for z in ["0", "00", &"0".repeat(20)] {
        for target in [
            format!("/a/status/{z}"),
            format!("/i/status/{z}"),
            format!("/a/status/{z}/quotes"),
            format!("/i/status/{z}/retweets"),
        ] {
            let req = format!(
                "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\r\n",
                x.host()
            );
            let r = roundtrip(&x, req.as_bytes());
            assert_eq!(r.status, 400, "{target}: {}", r.text());
            assert_eq!(r.json()["code"], "invalid_arguments", "{target}");
        }
    }
    assert_eq!(up.request_count(), 0);
}
