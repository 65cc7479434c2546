//! MCP protocol revisions this server speaks, and the legacy negotiation rule.
//!
//! Two eras share one endpoint: the stateless **2026-07-28** revision
//! ("modern", a per-request `_meta` claim) and the handshake revisions
//! **2025-11-25 / 2025-06-18 / 2025-03-26** ("legacy", negotiated by
//! `initialize`). This module only names them; routing lives in `dispatch`.

/// One supported MCP revision. Variants are declared in date order, so
/// `Ord` compares revisions chronologically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// `2025-03-26`: first Streamable HTTP revision; no `structuredContent`,
    /// `outputSchema` or `title`.
    V2025_03_26,
    /// `2025-06-18`: adds `title`, `outputSchema`, `structuredContent`.
    V2025_06_18,
    /// `2025-11-25`: the newest handshake revision (adds `icons`).
    V2025_11_25,
    /// `2026-07-28`: stateless, per-request `_meta`, mirrored headers.
    V2026_07_28,
}

use ProtocolVersion::*;

impl ProtocolVersion {
    /// Every supported revision, newest first. This exact list is
    /// `server/discover` `supportedVersions` and `-32022`
    /// `error.data.supported`, so the two always agree.
    pub const SUPPORTED: [ProtocolVersion; 4] =
        [V2026_07_28, V2025_11_25, V2025_06_18, V2025_03_26];

    /// The handshake-era revisions, newest first.
    pub const LEGACY: [ProtocolVersion; 3] = [V2025_11_25, V2025_06_18, V2025_03_26];

    /// The stateless revision.
    pub const MODERN: ProtocolVersion = V2026_07_28;

    /// What `initialize` answers when the client proposes a revision we do
    /// not speak in the handshake era.
    pub const LATEST_LEGACY: ProtocolVersion = V2025_11_25;

    /// What a legacy request without `MCP-Protocol-Version` is taken to be
    /// (2025-06-18 transport text: "the server SHOULD assume 2025-03-26").
    pub const DEFAULT_LEGACY: ProtocolVersion = V2025_03_26;

    /// The wire spelling, e.g. `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            V2025_03_26 => "2025-03-26",
            V2025_06_18 => "2025-06-18",
            V2025_11_25 => "2025-11-25",
            V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses an exact wire spelling (case-sensitive, no trimming).
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::SUPPORTED.into_iter().find(|v| v.as_str() == s)
    }

    /// Parses a raw header value (already OWS-trimmed) as a version.
    pub fn parse_bytes(b: &[u8]) -> Option<ProtocolVersion> {
        std::str::from_utf8(b).ok().and_then(Self::parse)
    }

    /// True for the stateless 2026-07-28 revision.
    pub const fn is_modern(self) -> bool {
        matches!(self, V2026_07_28)
    }

    /// Legacy `initialize` negotiation: echo a requested handshake revision
    /// we support; answer anything else (including `2026-07-28`, in which
    /// `initialize` does not exist, or a future date) with
    /// [`ProtocolVersion::LATEST_LEGACY`].
    pub fn negotiate(requested: &str) -> ProtocolVersion {
        match Self::parse(requested) {
            Some(v) if !v.is_modern() => v,
            _ => Self::LATEST_LEGACY,
        }
    }

    /// Every supported revision in date order; `DATE_ORDER[v.index()] == v`.
    pub(crate) const DATE_ORDER: [ProtocolVersion; 4] =
        [V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28];

    /// Dense index (date order), for per-version tables.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_chronological() {
        assert!(V2025_03_26 < V2025_06_18);
        assert!(V2025_06_18 < V2025_11_25);
        assert!(V2025_11_25 < V2026_07_28);
        let mut sorted = ProtocolVersion::SUPPORTED;
        sorted.sort();
        sorted.reverse();
        assert_eq!(sorted, ProtocolVersion::SUPPORTED);
    }

    #[test]
    fn parse_round_trips_and_is_exact() {
        for v in ProtocolVersion::SUPPORTED {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            assert_eq!(ProtocolVersion::parse_bytes(v.as_str().as_bytes()), Some(v));
            assert_eq!(v.to_string(), v.as_str());
        }
        assert_eq!(ProtocolVersion::parse(" 2025-11-25"), None);
        assert_eq!(ProtocolVersion::parse("2024-11-05"), None);
        assert_eq!(ProtocolVersion::parse("v999.0.0"), None);
        assert_eq!(ProtocolVersion::parse_bytes(b"\xff2025-11-25"), None);
    }

    #[test]
    fn negotiation_echoes_legacy_and_counter_offers_latest_legacy() {
        assert_eq!(ProtocolVersion::negotiate("2025-11-25"), V2025_11_25);
        assert_eq!(ProtocolVersion::negotiate("2025-06-18"), V2025_06_18);
        assert_eq!(ProtocolVersion::negotiate("2025-03-26"), V2025_03_26);
        assert_eq!(ProtocolVersion::negotiate("2026-07-28"), V2025_11_25);
        assert_eq!(ProtocolVersion::negotiate("2099-01-01"), V2025_11_25);
        assert_eq!(ProtocolVersion::negotiate("2024-11-05"), V2025_11_25);
        assert_eq!(ProtocolVersion::negotiate(""), V2025_11_25);
    }

    #[test]
    fn only_2026_is_modern() {
        let modern: Vec<_> = ProtocolVersion::SUPPORTED
            .into_iter()
            .filter(|v| v.is_modern())
            .collect();
        assert_eq!(modern, vec![ProtocolVersion::MODERN]);
        assert!(ProtocolVersion::LEGACY.iter().all(|v| !v.is_modern()));
        let idx: Vec<_> = ProtocolVersion::SUPPORTED
            .iter()
            .map(|v| v.index())
            .collect();
        assert_eq!(idx, vec![3, 2, 1, 0]);
        for v in ProtocolVersion::SUPPORTED {
            assert_eq!(ProtocolVersion::DATE_ORDER[v.index()], v);
        }
    }
}
