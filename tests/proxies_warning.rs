//! `--trusted-proxies` with a range wider than a /8 (IPv4) or a /32 (IPv6)
//! starts, and says at start, once per such range, that anyone in it can
//! set the client address (issue #32, item 7). The binary, plain and JSON
//! log.

mod util;

use std::time::{Duration, Instant};
use util::Xmd;

/// The log lines after the start line that mention `--trusted-proxies`,
/// once the server has had a moment to write them.
fn proxy_warnings(x: &Xmd) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let lines: Vec<String> = x.log.lock().unwrap()[1..]
            .iter()
            .filter(|l| l.contains("--trusted-proxies"))
            .cloned()
            .collect();
        if lines.len() >= 2 || Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const WARNING: &str = "--trusted-proxies 0.0.0.0/0 is wider than a /8: every address in it can \
    set the client address with x-forwarded-for (rate limits, per-address caps and the access \
    log read it); list only your reverse proxies";

#[test]
fn wide_trusted_ranges_are_warned_about_at_start() {
    let x = Xmd::start(&[
        "--trusted-proxies",
        "0.0.0.0/0,10.0.0.0/8,2001:db8::/16,::1",
    ]);
    let lines = proxy_warnings(&x);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], format!("xmd: warning: {WARNING}"));
    assert!(
        lines[1].starts_with("xmd: warning: --trusted-proxies 2001:db8::/16 is wider than a /32:")
    );

    let x = Xmd::start(&["--trusted-proxies", "0.0.0.0/0", "--log-format", "json"]);
    let lines = proxy_warnings(&x);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let v: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(v["event"], "warning");
    assert_eq!(v["message"], WARNING);

    let x = Xmd::start(&["--trusted-proxies", "10.0.0.0/8,127.0.0.1,fd00::/32"]);
    assert_eq!(proxy_warnings(&x), Vec::<String>::new());
}
