//! The `Date` header value (IMF-fixdate, RFC 9110 §5.6.7), formatted at
//! most once per second.

use std::time::{SystemTime, UNIX_EPOCH};

/// Caches the IMF-fixdate text of the current second.
#[derive(Debug, Default)]
pub struct DateCache {
    second: u64,
    text: String,
}

impl DateCache {
    /// The `Date` value for now (29 bytes, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`).
    pub fn now(&mut self) -> &str {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if secs != self.second || self.text.is_empty() {
            self.second = secs;
            self.text = imf_fixdate(secs);
        }
        &self.text
    }
}

/// Formats unix seconds as IMF-fixdate.
pub fn imf_fixdate(secs: u64) -> String {
    use crate::calendar::{civil_from_days, MONTHS, WEEKDAYS};
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[(days % 7) as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(imf_fixdate(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(imf_fixdate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(imf_fixdate(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
