//! The report formats: text (terminal), JSON (`docs/probe.schema.json`),
//! JUnit XML and SARIF 2.1.0.

mod json;
mod junit;
mod sarif;
mod text;

use std::time::SystemTime;

pub use json::to_json;
pub use junit::to_junit;
pub use sarif::to_sarif;
pub use text::to_text;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Junit,
    Sarif,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "junit" => Some(Format::Junit),
            "sarif" => Some(Format::Sarif),
            _ => None,
        }
    }
}

/// Renders `report` in `format`.
pub fn render(report: &super::Report, format: Format) -> String {
    match format {
        Format::Text => to_text(report),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&to_json(report)).expect("JSON");
            s.push('\n');
            s
        }
        Format::Junit => to_junit(report),
        Format::Sarif => {
            let mut s = serde_json::to_string_pretty(&to_sarif(report)).expect("JSON");
            s.push('\n');
            s
        }
    }
}

/// RFC 3339 UTC with milliseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (y, m, day) = crate::calendar::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s / 60 % 60,
        s % 60,
        d.subsec_millis()
    )
}

/// 64-bit FNV-1a, hex (SARIF fingerprints).
pub fn fnv1a(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_is_utc_with_milliseconds() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_212_800_042);
        assert_eq!(rfc3339(t), "2026-12-02T12:00:00.042Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn fnv1a_matches_the_reference_and_separates_parts() {
        // Python: FNV-1a 64 over b"TRANS-13\0legacy\0".
        assert_eq!(fnv1a(&["TRANS-13", "legacy"]), "4e852dfce3a61cc9");
        assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
    }
}
