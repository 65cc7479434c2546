//! The proleptic Gregorian calendar in UTC, as the date formats xmd reads
//! and writes need it (IMF-fixdate, X's classic `created_at`, ISO 8601):
//! day counts since 1970-01-01 and the English day and month names. Kept
//! once here; a leaf: it imports nothing from the crate.

/// English three-letter month names, January first (IMF-fixdate, RFC 9110
/// §5.6.7, and X's `Mon Aug 10 12:41:03 +0000 2026`).
pub const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// English three-letter day names, indexed by days since 1970-01-01 (a
/// Thursday) modulo 7: `WEEKDAYS[days.rem_euclid(7)]`.
pub const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];

/// The month number (1 to 12) of a name in [`MONTHS`].
pub fn month_number(name: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == name).map(|i| i as u32 + 1)
}

/// Days since 1970-01-01 of year `y`, month `m` (1 to 12), day `d`
/// (H. Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of a day count since 1970-01-01 (the inverse
/// of [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Oracle: a calendar walked one day at a time with the leap-year rule
    /// and month lengths, from 1600-01-01 to 9999-12-31; every day's count
    /// and weekday must agree with the formulas.
    #[test]
    fn every_day_from_1600_to_9999_agrees_with_a_day_by_day_walk() {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let length = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        // 1600-01-01 is 135,140 days before 1970-01-01, a Saturday.
        let (mut y, mut m, mut d, mut days) = (1600_i64, 1_u32, 1_u32, -135_140_i64);
        let mut weekday = 2; // Sat, in WEEKDAYS order
        while y <= 9999 {
            assert_eq!(civil_from_days(days), (y, m, d), "{days}");
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days);
            assert_eq!(WEEKDAYS[days.rem_euclid(7) as usize], WEEKDAYS[weekday]);
            d += 1;
            if d > length(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
            days += 1;
            weekday = (weekday + 1) % 7;
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(WEEKDAYS[0], "Thu");
    }

    #[test]
    fn month_names() {
        assert_eq!(month_number("Jan"), Some(1));
        assert_eq!(month_number("Dec"), Some(12));
        assert_eq!(month_number("jan"), None);
        assert_eq!(month_number("Sept"), None);
        for (i, name) in MONTHS.iter().enumerate() {
            assert_eq!(month_number(name), Some(i as u32 + 1));
        }
    }
}
