//! `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Parses a `Retry-After` value (RFC 9110 §10.2.3): delay-seconds, or an
/// IMF-fixdate turned into seconds from `now` (at least 1). `None` when
/// unparsable.
pub fn parse_retry_after(value: &str, now: u64) -> Option<u64> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse::<u64>().ok().or(Some(u64::MAX));
    }
    let at = parse_imf_fixdate(v)?;
    Some(at.saturating_sub(now).max(1))
}

/// Parses `Sun, 06 Nov 1994 08:49:37 GMT` into unix seconds.
fn parse_imf_fixdate(v: &str) -> Option<u64> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.len() != 6 || !parts[0].ends_with(',') || parts[5] != "GMT" {
        return None;
    }
    let day: u64 = parts[1].parse().ok()?;
    let month = u64::from(crate::calendar::month_number(parts[2])?);
    let year: u64 = parts[3].parse().ok()?;
    let hms: Vec<u64> = parts[4]
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if hms.len() != 3
        || !(1..=31).contains(&day)
        || year < 1970
        || hms[0] > 23
        || hms[1] > 59
        || hms[2] > 60
    {
        return None;
    }
    let days = crate::calendar::days_from_civil(year as i64, month as i64, day as i64);
    Some(days as u64 * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("30", 0), Some(30));
        assert_eq!(parse_retry_after(" 7 ", 0), Some(7));
        // 1994-11-06T08:49:37Z = 784111777
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777 - 42),
            Some(42)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777 + 5),
            Some(1)
        );
        assert_eq!(parse_retry_after("soon", 0), None);
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 PST", 0), None);
    }
}
