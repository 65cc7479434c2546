//! The `--trusted-proxies` and `--proxy-header` settings as values: the
//! address ranges and the header a trusted reverse proxy writes. Reading a
//! request's client address from them is `app::client_addr`'s job.

use std::net::IpAddr;

/// Most ranges `--trusted-proxies` accepts.
///
/// Default is 64; more is a usage error (exit status 2). The list is
/// searched for every hop of every request.
pub const MAX_TRUSTED_PROXIES: usize = 64;

/// The widest IPv4 range `--trusted-proxies` takes without a warning: a
/// /8. A wider one is accepted, and xmd warns at start
/// ([`TrustedProxies::warnings`]): every address in it may name any client
/// address in the proxy header.
pub const WIDEST_QUIET_V4_PREFIX: u8 = 8;

/// The widest IPv6 range `--trusted-proxies` takes without a warning: a
/// /32 (see [`WIDEST_QUIET_V4_PREFIX`]).
pub const WIDEST_QUIET_V6_PREFIX: u8 = 32;

/// One address range (`10.0.0.0/8`, `::1/128`; a bare address is a /32 or
/// /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `ADDR` or `ADDR/PREFIX`.
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let net: IpAddr = addr
            .parse::<IpAddr>()
            .map_err(|_| format!("'{text}' is not an IP address or CIDR range"))?
            .to_canonical();
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => match p.parse::<u8>() {
                Ok(n) if n <= max => n,
                _ => return Err(format!("'{text}': the prefix length must be 0 to {max}")),
            },
        };
        Ok(Cidr { net, prefix })
    }

    /// Whether `ip` (IPv4-mapped IPv6 counts as IPv4) is in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip.to_canonical()) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Cidr {
    /// `ADDR/PREFIX`, as `--trusted-proxies` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.net, self.prefix)
    }
}

/// Which header a trusted proxy writes (`--proxy-header`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (the default; nginx's
    /// `$proxy_add_x_forwarded_for`).
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client;proto=https, for="[2001:db8::1]:80"`.
    Forwarded,
}

impl ProxyHeader {
    /// Parses `x-forwarded-for` or `forwarded` (any case).
    pub fn parse(s: &str) -> Option<ProxyHeader> {
        match s.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Some(ProxyHeader::XForwardedFor),
            "forwarded" => Some(ProxyHeader::Forwarded),
            _ => None,
        }
    }

    /// The header's field name, lower case.
    pub fn name(self) -> &'static str {
        match self {
            ProxyHeader::XForwardedFor => "x-forwarded-for",
            ProxyHeader::Forwarded => "forwarded",
        }
    }
}

/// The trusted proxy ranges and the header they write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedProxies {
    ranges: Vec<Cidr>,
    header: ProxyHeader,
}

impl Default for TrustedProxies {
    /// None trusted: the client is always the TCP peer.
    fn default() -> TrustedProxies {
        TrustedProxies {
            ranges: Vec::new(),
            header: ProxyHeader::XForwardedFor,
        }
    }
}

impl TrustedProxies {
    /// Ranges from a comma-separated list, read from `header`.
    ///
    /// # Errors
    /// A bad range, or more than [`MAX_TRUSTED_PROXIES`].
    pub fn parse(list: &str, header: ProxyHeader) -> Result<TrustedProxies, String> {
        let ranges = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Cidr::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if ranges.len() > MAX_TRUSTED_PROXIES {
            return Err(format!(
                "{} ranges given, at most {MAX_TRUSTED_PROXIES} are accepted",
                ranges.len()
            ));
        }
        Ok(TrustedProxies { ranges, header })
    }

    /// Whether any range is trusted.
    pub fn any(&self) -> bool {
        !self.ranges.is_empty()
    }

    /// The trusted ranges as `ADDR/PREFIX` strings (for the start-up line).
    pub fn ranges_text(&self) -> Vec<String> {
        self.ranges.iter().map(ToString::to_string).collect()
    }

    /// The header read from trusted peers.
    pub fn header(&self) -> ProxyHeader {
        self.header
    }

    /// Whether `ip` is a trusted proxy.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.ranges.iter().any(|r| r.contains(ip))
    }

    /// One start-up warning per range wider than a /8 (IPv4) or a /32
    /// (IPv6): anyone in it can pick their client address.
    pub fn warnings(&self) -> Vec<String> {
        self.ranges
            .iter()
            .filter_map(|r| {
                let widest = if r.net.is_ipv4() {
                    WIDEST_QUIET_V4_PREFIX
                } else {
                    WIDEST_QUIET_V6_PREFIX
                };
                (r.prefix < widest).then(|| {
                    format!(
                        "--trusted-proxies {r} is wider than a /{widest}: every address in it \
                         can set the client address with {} (rate limits, per-address caps and \
                         the access log read it); list only your reverse proxies",
                        self.header.name()
                    )
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn proxies(list: &str, header: ProxyHeader) -> TrustedProxies {
        TrustedProxies::parse(list, header).unwrap()
    }

    #[test]
    fn ranges_wider_than_a_slash_8_or_32_are_warned_about() {
        let p = proxies(
            "0.0.0.0/0,10.0.0.0/8,11.0.0.0/7,::/0,2001:db8::/32,2001:db8::/31,127.0.0.1",
            ProxyHeader::XForwardedFor,
        );
        assert_eq!(
            p.warnings(),
            ["0.0.0.0/0", "11.0.0.0/7", "::/0", "2001:db8::/31"].map(|r| {
                let w = if r.contains(':') { 32 } else { 8 };
                format!(
                    "--trusted-proxies {r} is wider than a /{w}: every address in it can set \
                     the client address with x-forwarded-for (rate limits, per-address caps \
                     and the access log read it); list only your reverse proxies"
                )
            })
        );
        assert!(proxies("10.0.0.0/8,::1", ProxyHeader::Forwarded)
            .warnings()
            .is_empty());
    }

    #[test]
    fn ranges() {
        let c = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(c.contains(ip("10.255.0.1")));
        assert!(!c.contains(ip("11.0.0.1")));
        assert!(c.contains(ip("::ffff:10.1.2.3")));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
        assert!(!Cidr::parse("0.0.0.0/0").unwrap().contains(ip("::1")));
        let v6 = Cidr::parse("2001:db8::/32").unwrap();
        assert!(v6.contains(ip("2001:db8:ffff::1")));
        assert!(!v6.contains(ip("2001:db9::1")));
        assert_eq!(Cidr::parse("::1").unwrap().prefix, 128);
        assert_eq!(
            proxies(" 127.0.0.1, 10.0.0.0/8,::1", ProxyHeader::Forwarded).ranges_text(),
            ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]
        );
        assert_eq!(
            Cidr::parse("10.0.0.0/33").unwrap_err(),
            "'10.0.0.0/33': the prefix length must be 0 to 32"
        );
        assert_eq!(
            Cidr::parse("nginx").unwrap_err(),
            "'nginx' is not an IP address or CIDR range"
        );
        let many = vec!["10.0.0.1"; MAX_TRUSTED_PROXIES + 1].join(",");
        assert_eq!(
            TrustedProxies::parse(&many, ProxyHeader::XForwardedFor).unwrap_err(),
            "65 ranges given, at most 64 are accepted"
        );
    }
}
