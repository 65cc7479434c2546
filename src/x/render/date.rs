//! Post dates as ISO 8601 UTC (`2026-08-10T12:41:03Z`).
//!
//! FxTwitter gives `created_at` as X's classic string
//! (`Mon Aug 10 12:41:03 +0000 2026`) and `created_timestamp` (unix
//! seconds). The string is read first (it is what X sent); the timestamp is
//! the fallback; an ISO 8601 string (articles) is passed through.

use serde_json::Value;

use crate::calendar::{civil_from_days, days_from_civil};

/// Latest year accepted (keeps the day arithmetic far from overflow).
const MAX_YEAR: i64 = 9999;

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`, for years 1970 to 9999.
pub fn iso_from_unix(secs: i64) -> Option<String> {
    if secs < 0 {
        return None;
    }
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    (1970..=MAX_YEAR).contains(&y).then(|| {
        // Written digit by digit: `format!` costs several times more for
        // a string rendered for every post of a list.
        let mut out = String::with_capacity(20);
        let mut put = |n: i64, width: u32, after: char| {
            for p in (0..width).rev() {
                out.push(char::from(b'0' + (n / 10_i64.pow(p) % 10) as u8));
            }
            out.push(after);
        };
        put(y, 4, '-');
        put(m.into(), 2, '-');
        put(d.into(), 2, 'T');
        put(rem / 3600, 2, ':');
        put(rem / 60 % 60, 2, ':');
        put(rem % 60, 2, 'Z');
        out
    })
}

/// X's classic date (`Mon Aug 10 12:41:03 +0000 2026`) as unix seconds.
fn parse_classic(s: &str) -> Option<i64> {
    // Six fields, read without collecting them (this runs for every post
    // of a list).
    let mut f = s.split_whitespace();
    let (Some(_), Some(mon), Some(day), Some(time), Some(offset), Some(year), None) = (
        f.next(),
        f.next(),
        f.next(),
        f.next(),
        f.next(),
        f.next(),
        f.next(),
    ) else {
        return None;
    };
    let m = i64::from(crate::calendar::month_number(mon)?);
    let num = |s: &str, max: i64| s.parse::<i64>().ok().filter(|n| (0..=max).contains(n));
    let d = num(day, 31).filter(|d| *d >= 1)?;
    let y = num(year, MAX_YEAR)?;
    let mut hms = time.split(':');
    let (Some(h), Some(mi), Some(se), None) = (hms.next(), hms.next(), hms.next(), hms.next())
    else {
        return None;
    };
    let (h, mi, se) = (num(h, 23)?, num(mi, 59)?, num(se, 60)?);
    let (sign, digits) = match offset.as_bytes().first()? {
        b'+' => (1, &offset[1..]),
        b'-' => (-1, &offset[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let off = sign * (num(&digits[..2], 23)? * 3600 + num(&digits[2..], 59)? * 60);
    Some(days_from_civil(y, m, d) * 86_400 + h * 3600 + mi * 60 + se - off)
}

/// True for `YYYY-MM-DDTHH:MM:SS…` (digits where digits belong).
fn looks_iso(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 19
        && b.len() <= 40
        && b.iter().take(19).enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
        && s.is_ascii()
}

/// A date string (X's classic form, or ISO 8601 passed through) as ISO 8601
/// UTC.
pub fn iso(s: &str) -> Option<String> {
    parse_classic(s)
        .and_then(iso_from_unix)
        .or_else(|| looks_iso(s).then(|| s.to_string()))
}

/// The post's date as ISO 8601 UTC, when `created_at` or
/// `created_timestamp` gives one.
pub fn post_date(post: &Value) -> Option<String> {
    let ts = match post.get("created_timestamp") {
        Some(Value::Number(n)) => Some(n),
        _ => None,
    };
    date_of(post.get("created_at").and_then(Value::as_str), ts)
}

/// [`post_date`] of a typed status.
pub fn status_date(post: &crate::x::model::status::Status) -> Option<String> {
    date_of(post.created_at.as_deref(), post.created_timestamp.as_ref())
}

/// A post's date from its `created_at`, else its `created_timestamp`.
fn date_of(created_at: Option<&str>, ts: Option<&serde_json::Number>) -> Option<String> {
    if let Some(d) = created_at.and_then(iso) {
        return Some(d);
    }
    let ts = ts?;
    let secs = ts.as_i64().or_else(|| {
        ts.as_f64()
            .filter(|f| f.is_finite())
            .map(|f| f.floor() as i64)
    })?;
    iso_from_unix(secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    proptest::proptest! {
        /// The oracle: the same fields written by `format!`.
        #[test]
        fn iso_dates_are_what_format_writes(secs in -10i64..260_000_000_000) {
            let want = (secs >= 0).then(|| {
                let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
                let (y, m, d) = civil_from_days(days);
                (1970..=MAX_YEAR).contains(&y).then(|| format!(
                    "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
                    rem / 3600,
                    rem / 60 % 60,
                    rem % 60
                ))
            }).flatten();
            proptest::prop_assert_eq!(iso_from_unix(secs), want);
        }

        /// The oracle: the fields split as the first version did (collected
        /// into vectors, matched by length), over strings made of date-like
        /// words, wrong counts of fields and of `:` parts included.
        #[test]
        fn classic_fields_are_read_as_collected(
            words in proptest::collection::vec(proptest::sample::select(vec![
                "Mon", "Aug", "Feb", "10", "29", "0", "32", "12:41:03", "23:59:60", "1:2",
                "1:2:3:4", "::", "+0000", "-0130", "+2400", "2026", "9999", "10000", "x",
            ]), 0..9),
            seps in proptest::collection::vec(proptest::sample::select(vec![" ", "  ", "\t", "\u{2003}"]), 9),
            shaped in (
                proptest::sample::select(vec!["Mon", "x"]),
                proptest::sample::select(vec!["Aug", "Feb", "Foo"]),
                proptest::sample::select(vec!["10", "29", "0", "32"]),
                proptest::sample::select(vec!["12:41:03", "23:59:60", "1:2", "1:2:3:4", "24:00:00"]),
                proptest::sample::select(vec!["+0000", "-0130", "+2400", "0000", "+00a0"]),
                proptest::sample::select(vec!["2026", "9999", "10000", "1969"]),
            ),
            use_shaped in proptest::bool::weighted(0.7),
        ) {
            let (a, b, c, d, e, f) = shaped;
            let words = if use_shaped { vec![a, b, c, d, e, f] } else { words };
            let mut s = String::new();
            for (w, sep) in words.iter().zip(&seps) {
                s.push_str(w);
                s.push_str(sep);
            }
            let oracle = |s: &str| -> Option<i64> {
                let f: Vec<&str> = s.split_whitespace().collect();
                let [_, mon, day, time, offset, year] = f.as_slice() else {
                    return None;
                };
                let m = i64::from(crate::calendar::month_number(mon)?);
                let num = |s: &str, max: i64| s.parse::<i64>().ok().filter(|n| (0..=max).contains(n));
                let d = num(day, 31).filter(|d| *d >= 1)?;
                let y = num(year, MAX_YEAR)?;
                let hms: Vec<&str> = time.split(':').collect();
                let [h, mi, se] = hms.as_slice() else {
                    return None;
                };
                let (h, mi, se) = (num(h, 23)?, num(mi, 59)?, num(se, 60)?);
                let (sign, digits) = match offset.as_bytes().first()? {
                    b'+' => (1, &offset[1..]),
                    b'-' => (-1, &offset[1..]),
                    _ => return None,
                };
                if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let off = sign * (num(&digits[..2], 23)? * 3600 + num(&digits[2..], 59)? * 60);
                Some(days_from_civil(y, m, d) * 86_400 + h * 3600 + mi * 60 + se - off)
            };
            proptest::prop_assert_eq!(parse_classic(&s), oracle(&s), "{:?}", s);
        }
    }

    #[test]
    fn classic_and_timestamp() {
        let d = |v| post_date(&v);
        assert_eq!(
            d(json!({"created_at": "Mon Aug 10 12:41:03 +0000 2026"})),
            Some("2026-08-10T12:41:03Z".into())
        );
        assert_eq!(
            d(json!({"created_at": "Tue Feb 29 23:30:00 -0130 2028"})),
            Some("2028-03-01T01:00:00Z".into())
        );
        assert_eq!(
            d(json!({"created_at": "junk", "created_timestamp": 1727870400})),
            Some("2024-10-02T12:00:00Z".into())
        );
        assert_eq!(
            d(json!({"created_at": "2024-05-02T11:20:33.000Z"})),
            Some("2024-05-02T11:20:33.000Z".into())
        );
        assert_eq!(d(json!({"created_timestamp": 1.5e300})), None);
        assert_eq!(d(json!({"created_timestamp": -1})), None);
        assert_eq!(d(json!({})), None);
        assert_eq!(iso_from_unix(0), Some("1970-01-01T00:00:00Z".into()));
    }
}
