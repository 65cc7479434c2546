//! `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, and the
//! HTTP-date itself in all three forms a recipient must accept (§5.6.7):
//!
//! - IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` (the one senders write);
//! - obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`, whose two-digit
//!   year is read as the year with those digits that is not more than 50
//!   years after the reference instant (else the most recent past one);
//! - ANSI C asctime `Sun Nov  6 08:49:37 1994`.
//!
//! The grammar is read exactly (names case-sensitive, one space where the
//! ABNF has `SP`, two digits where it has `2DIGIT`); the day name is not
//! checked against the date. A value that is none of these is no hint:
//! the caller falls back to [`super::error::DEFAULT_RETRY_AFTER_SECS`]
//! (5 s). A date is taken relative to the reference instant the caller
//! gives (now: the upstream's `Date` header is not kept).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::calendar::{days_from_civil, month_number, WEEKDAYS};

/// The day names of the RFC 850 form (`day-name-l`), Monday first.
const LONG_DAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Seconds since 1970-01-01T00:00:00Z, now (0 if the clock is before it).
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Parses a `Retry-After` value into seconds to wait from `now` (unix
/// seconds): delay-seconds as given (an overflowing number is `u64::MAX`,
/// which callers cap), or an HTTP-date in any of its three forms turned
/// into the seconds from `now` until it, at least 1 (a past date: retry
/// now). `None` when the value is neither.
pub fn parse_retry_after(value: &str, now: u64) -> Option<u64> {
    let v = value.trim_matches([' ', '\t']);
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse::<u64>().ok().or(Some(u64::MAX));
    }
    let now = i64::try_from(now).ok()?;
    let at = parse_http_date(v, now)?;
    Some(u64::try_from(at.saturating_sub(now)).unwrap_or(0).max(1))
}

/// Parses an HTTP-date (RFC 9110 §5.6.7) in any of its three forms into
/// unix seconds; `now` (unix seconds) places an RFC 850 two-digit year.
/// `None` for anything else, or a date that does not exist (31 Feb, hour
/// 24).
pub fn parse_http_date(v: &str, now: i64) -> Option<i64> {
    let b = v.as_bytes();
    if b.len() == 29 && b[3] == b',' {
        imf_fixdate(b)
    } else if b.len() == 24 && b[3] == b' ' {
        asctime(b)
    } else {
        rfc850(b, now)
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(b: &[u8]) -> Option<i64> {
    short_day_name(&b[0..3])?;
    if &b[3..5] != b", " || b[7] != b' ' || b[11] != b' ' || b[16] != b' ' || &b[25..] != b" GMT" {
        return None;
    }
    let day = digits(&b[5..7])?;
    let month = month(&b[8..11])?;
    let year = digits(&b[12..16])?;
    let secs = time_of_day(&b[17..25])?;
    instant(year, month, day, secs)
}

/// `Sun Nov  6 08:49:37 1994`
fn asctime(b: &[u8]) -> Option<i64> {
    short_day_name(&b[0..3])?;
    if b[7] != b' ' || b[10] != b' ' || b[19] != b' ' {
        return None;
    }
    let month = month(&b[4..7])?;
    // `2DIGIT / ( SP DIGIT )`
    let day = match b[8] {
        b' ' => digits(&b[9..10])?,
        _ => digits(&b[8..10])?,
    };
    let secs = time_of_day(&b[11..19])?;
    let year = digits(&b[20..24])?;
    instant(year, month, day, secs)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn rfc850(b: &[u8], now: i64) -> Option<i64> {
    let comma = b.iter().position(|&c| c == b',')?;
    let name = std::str::from_utf8(&b[..comma]).ok()?;
    if !LONG_DAY_NAMES.contains(&name) {
        return None;
    }
    let r = &b[comma..];
    // `, 06-Nov-94 08:49:37 GMT`
    if r.len() != 24 || &r[..2] != b", " || r[4] != b'-' || r[8] != b'-' || r[11] != b' ' {
        return None;
    }
    if &r[20..] != b" GMT" {
        return None;
    }
    let day = digits(&r[2..4])?;
    let month = month(&r[5..8])?;
    let yy = digits(&r[9..11])?;
    let secs = time_of_day(&r[12..20])?;
    instant(two_digit_year(yy, month, day, secs, now), month, day, secs)
}

/// The year ending in `yy` of a date (`month`, `day`, `secs` into the day)
/// that is not more than 50 years after `now`: the latest such year whose
/// instant is at most `now` plus 50 years (RFC 9110 §5.6.7).
fn two_digit_year(yy: i64, month: i64, day: i64, secs: i64, now: i64) -> i64 {
    let days = now.div_euclid(86_400);
    let (now_y, now_m, now_d) = crate::calendar::civil_from_days(days);
    let (now_m, now_d) = (i64::from(now_m), i64::from(now_d));
    // Now plus 50 years: the same day and time (the last of the month when
    // that day does not exist then, as 29 Feb).
    let later_y = now_y + 50;
    let later_d = now_d.min(month_length(later_y, now_m));
    let limit = days_from_civil(later_y, now_m, later_d) * 86_400 + now.rem_euclid(86_400);
    let base = now_y - now_y.rem_euclid(100) + yy;
    [base + 100, base, base - 100]
        .into_iter()
        .find(|&y| days_from_civil(y, month, day) * 86_400 + secs <= limit)
        .unwrap_or(base - 100)
}

fn short_day_name(b: &[u8]) -> Option<()> {
    let s = std::str::from_utf8(b).ok()?;
    WEEKDAYS.contains(&s).then_some(())
}

fn month(b: &[u8]) -> Option<i64> {
    month_number(std::str::from_utf8(b).ok()?).map(i64::from)
}

/// ASCII digits only (no sign, no space) as a number.
fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
}

/// `HH:MM:SS` as seconds into the day (a leap second `60` allowed).
fn time_of_day(b: &[u8]) -> Option<i64> {
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, m, s) = (digits(&b[0..2])?, digits(&b[3..5])?, digits(&b[6..8])?);
    (h <= 23 && m <= 59 && s <= 60).then_some(h * 3600 + m * 60 + s)
}

fn month_length(year: i64, month: i64) -> i64 {
    let (ny, nm) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    days_from_civil(ny, nm, 1) - days_from_civil(year, month, 1)
}

/// Unix seconds of a date that exists.
fn instant(year: i64, month: i64, day: i64, secs: i64) -> Option<i64> {
    if day < 1 || day > month_length(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9110 §5.6.7's own example instant, 1994-11-06T08:49:37Z.
    const EXAMPLE: u64 = 784_111_777;

    #[test]
    fn the_rfc_examples_in_all_three_forms() {
        for form in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_retry_after(form, EXAMPLE - 42), Some(42), "{form}");
            assert_eq!(parse_retry_after(form, EXAMPLE + 5), Some(1), "{form}");
        }
        assert_eq!(parse_retry_after("30", 0), Some(30));
        assert_eq!(parse_retry_after(" 7 ", 0), Some(7));
        assert_eq!(
            parse_retry_after("99999999999999999999999", 0),
            Some(u64::MAX)
        );
        assert_eq!(parse_retry_after("soon", 0), None);
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 PST", 0), None);
    }
}
