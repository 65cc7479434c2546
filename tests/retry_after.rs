//! `Retry-After` in every form RFC 9110 lets an upstream send (issue 28
//! item 4): delay-seconds and an HTTP-date as IMF-fixdate, obsolete RFC 850
//! (two-digit year) or asctime (§10.2.3, §5.6.7: a recipient must accept
//! all three). FxTwitter once sent an RFC 850 date for 40 s and xmd read it
//! as its 5 s default.
//!
//! The oracle renders instants in each form from its own calendar (a walk
//! over year and month lengths with the Gregorian leap rule, its own name
//! tables), not from the crate's `calendar.rs`.

mod common;

use std::time::Duration;

use common::browse::{err, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::json;
use xmd::x::answer::check_transport;
use xmd::x::error::DEFAULT_RETRY_AFTER_SECS;
use xmd::x::retry_after::{now_unix, parse_http_date, parse_retry_after};
use xmd::x::upstream::{UpstreamResponse, MAX_COOLDOWN};

const DAY: i64 = 86_400;
const SHORT_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
/// 1970-01-01 .. 2200-01-01, the range of instants generated.
const LAST: i64 = 7_258_118_400;

fn leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn year_days(y: i64) -> i64 {
    if leap(y) {
        366
    } else {
        365
    }
}

fn month_days(y: i64, m: usize) -> i64 {
    [
        31,
        if leap(y) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ][m]
}

/// The civil fields of unix seconds `t`: (year, month index 0..12, day,
/// hour, minute, second, weekday with Sunday 0).
struct Civil {
    y: i64,
    m: usize,
    d: i64,
    h: i64,
    mi: i64,
    s: i64,
    wd: usize,
}

fn civil(t: i64) -> Civil {
    let mut days = t.div_euclid(DAY);
    let secs = t.rem_euclid(DAY);
    // 1970-01-01 was a Thursday.
    let wd = (days + 4).rem_euclid(7) as usize;
    let mut y = 1970;
    while days < 0 {
        y -= 1;
        days += year_days(y);
    }
    while days >= year_days(y) {
        days -= year_days(y);
        y += 1;
    }
    let mut m = 0;
    while days >= month_days(y, m) {
        days -= month_days(y, m);
        m += 1;
    }
    Civil {
        y,
        m,
        d: days + 1,
        h: secs / 3600,
        mi: secs % 3600 / 60,
        s: secs % 60,
        wd,
    }
}

/// Unix seconds of a civil date (the inverse of [`civil`], by the same walk).
fn unix(y: i64, m: usize, d: i64, secs: i64) -> i64 {
    let mut days = 0;
    if y >= 1970 {
        days += (1970..y).map(year_days).sum::<i64>();
    } else {
        days -= (y..1970).map(year_days).sum::<i64>();
    }
    days += (0..m).map(|k| month_days(y, k)).sum::<i64>();
    (days + d - 1) * DAY + secs
}

fn imf(t: i64) -> String {
    let c = civil(t);
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        SHORT_DAYS[c.wd], c.d, MONTHS[c.m], c.y, c.h, c.mi, c.s
    )
}

fn rfc850(t: i64) -> String {
    let c = civil(t);
    format!(
        "{}, {:02}-{}-{:02} {:02}:{:02}:{:02} GMT",
        LONG_DAYS[c.wd],
        c.d,
        MONTHS[c.m],
        c.y % 100,
        c.h,
        c.mi,
        c.s
    )
}

fn asctime(t: i64) -> String {
    let c = civil(t);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {:04}",
        SHORT_DAYS[c.wd], MONTHS[c.m], c.d, c.h, c.mi, c.s, c.y
    )
}

#[test]
fn the_oracle_renders_the_rfc_example() {
    let t = 784_111_777;
    assert_eq!(imf(t), "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(rfc850(t), "Sunday, 06-Nov-94 08:49:37 GMT");
    assert_eq!(asctime(t), "Sun Nov  6 08:49:37 1994");
    assert_eq!(unix(1994, 10, 6, 8 * 3600 + 49 * 60 + 37), t);
}

proptest! {
    /// A date `delay` seconds after `now` in any form is a wait of exactly
    /// `delay` seconds; a date at or before `now` is a wait of 1 s.
    #[test]
    fn every_form_gives_the_exact_delay(
        now in 0..LAST - 41 * 365 * DAY,
        delay in prop_oneof![1..120i64, 1..40 * 365 * DAY],
        past in 0..100 * 365 * DAY,
    ) {
        let at = now + delay;
        for form in [imf(at), rfc850(at), asctime(at)] {
            prop_assert_eq!(parse_retry_after(&form, now as u64), Some(delay as u64), "{}", form);
        }
        let before = (now - past).max(0);
        for form in [imf(before), asctime(before)] {
            prop_assert_eq!(parse_retry_after(&form, now as u64), Some(1), "{}", form);
        }
        if now - before < 49 * 365 * DAY {
            let form = rfc850(before);
            prop_assert_eq!(parse_retry_after(&form, now as u64), Some(1), "{}", form);
        }
    }

    /// RFC 850's two-digit year: an instant up to 49 years either side of
    /// the reference is read back exactly; one that with the reference's
    /// century would be 51 to 99 years ahead is read 100 years earlier
    /// (the most recent past year with the same two digits), or refused
    /// when that year has no such day (29 Feb).
    #[test]
    fn rfc850_years_within_fifty_years(
        now in 0..LAST - 100 * 366 * DAY,
        offset in -49 * 365 * DAY..49 * 365 * DAY,
        ahead in 51 * 366 * DAY..99 * 365 * DAY,
    ) {
        let t = now + offset;
        prop_assert_eq!(parse_http_date(&rfc850(t), now), Some(t), "{}", rfc850(t));
        let far = now + ahead;
        let c = civil(far);
        let want = (c.m != 1 || c.d != 29 || leap(c.y - 100))
            .then(|| unix(c.y - 100, c.m, c.d, c.h * 3600 + c.mi * 60 + c.s));
        prop_assert_eq!(parse_http_date(&rfc850(far), now), want, "{}", rfc850(far));
    }

    /// The forms name the same instant for every instant of 1970–2200.
    #[test]
    fn imf_and_asctime_read_any_instant(t in 0..LAST) {
        prop_assert_eq!(parse_http_date(&imf(t), 0), Some(t));
        prop_assert_eq!(parse_http_date(&asctime(t), 0), Some(t));
    }
}

/// Near misses of each form are no hint: a 429 carrying one is reported
/// with the default wait ([`DEFAULT_RETRY_AFTER_SECS`], 5 s).
#[test]
fn malformed_dates_fall_back_to_the_default_wait() {
    let bad = [
        "",
        "-5",
        "1.5",
        "in a minute",
        "sun, 06 nov 1994 08:49:37 gmt",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun,  06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37",
        "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov 31 08:49:37 1994",
        "Sun Nov  6 08:60:37 1994",
    ];
    for v in bad {
        assert_eq!(parse_retry_after(v, 0), None, "{v:?}");
        let resp = UpstreamResponse {
            status: 429,
            retry_after: Some(v.into()),
            content_type: None,
            body: Vec::new().into(),
        };
        let e = check_transport(&resp).unwrap_err();
        assert_eq!(e.retry_after, Some(DEFAULT_RETRY_AFTER_SECS), "{v:?}");
        assert_eq!(DEFAULT_RETRY_AFTER_SECS, 5);
    }
}

/// Through the loopback upstream: a 429 whose `Retry-After` is an RFC 850
/// date 40 s ahead cools the upstream for those 40 s: the call says so,
/// and a call a moment later is refused locally with the time left (not
/// 5 s), sending nothing.
#[test]
fn an_rfc850_retry_after_cools_for_its_forty_seconds() {
    let fake = FakeUpstream::start();
    let at = now_unix() as i64 + 40;
    let when = rfc850(at);
    fake.on(
        "/2/status/1",
        Answer::json(429, "{}").header("Retry-After", &when),
    );
    let tools = tools_for(&fake);
    let args = json!({"handle": "u", "id": "1", "thread": "off"});
    let t = err(&tools, "x_md_get_post", args.clone());
    let secs = |t: &str| -> u64 {
        let n = t.rsplit("retry after ").next().unwrap();
        n.trim_end_matches("s)").parse().unwrap()
    };
    assert!(
        t.starts_with("FxTwitter is rate limiting xmd right now. (HTTP 503, code upstream_rate_limited, retry after "),
        "{t}"
    );
    let first = secs(&t);
    assert!((38..=40).contains(&first), "{when}: {t}");
    assert_eq!(fake.request_count(), 1);
    std::thread::sleep(Duration::from_millis(1100));
    let t = err(&tools, "x_md_get_post", args);
    assert!(
        t.starts_with(
            "FxTwitter asked xmd to slow down; no request is sent until its cool-down ends."
        ),
        "{t}"
    );
    let left = secs(&t);
    assert!((36..=40).contains(&left), "{when}: {t}");
    assert_eq!(fake.request_count(), 1, "nothing sent during the cool-down");
}

/// Through the loopback upstream, each form of the same wait (40 s as
/// delay-seconds, and a date 40 s ahead as IMF-fixdate, RFC 850 and
/// asctime): the call names 38 to 40 s, and the next call is refused
/// locally with as much left, sending nothing.
#[test]
fn every_form_cools_the_upstream_for_its_wait() {
    let at = now_unix() as i64 + 40;
    for form in ["40".to_string(), imf(at), rfc850(at), asctime(at)] {
        let fake = FakeUpstream::start();
        fake.on(
            "/2/status/1",
            Answer::json(429, "{}").header("Retry-After", &form),
        );
        let tools = tools_for(&fake);
        let args = json!({"handle": "u", "id": "1", "thread": "off"});
        let secs = |t: &str| -> u64 {
            let n = t.rsplit("retry after ").next().unwrap();
            n.trim_end_matches("s)").parse().unwrap()
        };
        let t = err(&tools, "x_md_get_post", args.clone());
        assert!(t.contains("code upstream_rate_limited"), "{form}: {t}");
        assert!((38..=40).contains(&secs(&t)), "{form}: {t}");
        let t = err(&tools, "x_md_get_post", args);
        assert!(
            t.starts_with("FxTwitter asked xmd to slow down"),
            "{form}: {t}"
        );
        assert!((37..=40).contains(&secs(&t)), "{form}: {t}");
        assert_eq!(
            fake.request_count(),
            1,
            "{form}: nothing sent during the cool-down"
        );
    }
}

proptest! {
    /// Whatever wait an upstream asks for (delay-seconds of any length,
    /// `99999999999999999999` included, or a date up to 200 years ahead),
    /// the agent is told at most `MAX_COOLDOWN` (1 hour), the wait the
    /// server actually keeps: the exact number up to it, 5 s for 0, and
    /// the same cap on a 5xx's hint. (An absurd value reached the agent as
    /// "retry after 18446744073709551615s".)
    #[test]
    fn the_wait_the_agent_is_told_is_at_most_the_cooldown(
        digits in "[0-9]{1,40}",
        ahead in 0i64..(200 * 366 * 86_400),
    ) {
        let cap = MAX_COOLDOWN.as_secs();
        assert_eq!(cap, 3600);
        let told = |status: u16, v: &str| {
            let resp = UpstreamResponse {
                status,
                retry_after: Some(v.into()),
                content_type: None,
                body: Vec::new().into(),
            };
            check_transport(&resp).unwrap_err().retry_after
        };
        let asked = digits.parse::<u64>().unwrap_or(u64::MAX);
        let want = if asked == 0 { DEFAULT_RETRY_AFTER_SECS } else { asked.min(cap) };
        prop_assert_eq!(told(429, &digits), Some(want), "{}", digits);
        prop_assert_eq!(told(503, &digits), Some(asked.min(cap)), "{}", digits);
        let date = imf(now_unix() as i64 + ahead);
        let t = told(429, &date).unwrap();
        prop_assert!(t <= cap && (t == cap || t + 2 >= ahead.max(1) as u64), "{} -> {}", date, t);
    }
}
