//! Properties of what `xmd probe` reports (issue 29): evidence never shows
//! a credential, a session id or a query, and the reported target never
//! shows userinfo or a query, whatever the case of the header names and
//! the bytes of the secrets. The oracle is the secret itself: it must not
//! occur in the output, while every other header line does, unchanged.

use proptest::prelude::*;
use xmd::probe::wire::{redact, Target, EVIDENCE_REQUEST_BYTES};

const SECRET_HEADERS: [&str; 4] = [
    "authorization",
    "cookie",
    "proxy-authorization",
    "mcp-session-id",
];

fn any_case(name: &'static str) -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<bool>(), name.len()).prop_map(move |up| {
        name.chars()
            .zip(up)
            .map(|(c, u)| if u { c.to_ascii_uppercase() } else { c })
            .collect()
    })
}

proptest! {
    #[test]
    fn evidence_never_shows_a_secret(
        which in 0..SECRET_HEADERS.len(),
        upper in proptest::collection::vec(any::<bool>(), 20),
        secret in "[A-Za-z0-9+/=._~-]{12,40}",
        query_secret in "[A-Za-z0-9]{12,30}",
        other in "[a-z]{1,10}",
        other_value in "[a-z0-9]{1,20}",
        body in "[ -~]{0,60}",
    ) {
        let name: String = SECRET_HEADERS[which]
            .chars()
            .zip(upper)
            .map(|(c, u)| if u { c.to_ascii_uppercase() } else { c })
            .collect();
        let raw = format!(
            "POST /mcp?token={query_secret} HTTP/1.1\r\nHost: h\r\n{name}: Bearer {secret}\r\nX-{other}: {other_value}\r\n\r\n{body}"
        );
        let out = redact(raw.as_bytes());
        prop_assert!(!out.contains(&secret), "{out}");
        prop_assert!(!out.contains(&query_secret), "{out}");
        let redacted_line = format!("\r\n{name}: <redacted>\r\n");
        let other_line = format!("\r\nX-{other}: {other_value}\r\n");
        prop_assert!(out.contains(&redacted_line), "{}", out);
        prop_assert!(out.contains(&other_line), "{}", out);
        prop_assert!(out.ends_with(&format!("\r\n\r\n{body}")), "{}", out);
    }

    #[test]
    fn long_requests_are_cut_and_say_their_length(extra in 0usize..20_000) {
        let body = "a".repeat(EVIDENCE_REQUEST_BYTES + extra);
        let raw = format!("POST / HTTP/1.1\r\nHost: h\r\n\r\n{body}");
        let out = redact(raw.as_bytes());
        let tail = format!("… ({} bytes in all)", raw.len());
        prop_assert!(out.ends_with(&tail), "{}", out.len());
        prop_assert!(out.len() < EVIDENCE_REQUEST_BYTES + 40);
    }

    #[test]
    fn the_reported_target_has_no_userinfo_or_query(
        user in "[a-z]{1,8}",
        pass in "[A-Za-z0-9]{6,16}",
        host in "[a-z]{1,10}(\\.[a-z]{1,6}){0,2}",
        port in 1u16..,
        path in "(/[a-z0-9]{1,8}){0,3}",
        query in "[a-z0-9=&]{1,20}",
        name_case in any_case("http"),
    ) {
        let url = format!("{name_case}://{user}:{pass}@{host}:{port}{path}?{query}#frag");
        let t = Target::parse(&url).unwrap();
        let shown = t.redacted_url();
        prop_assert_eq!(&shown, &format!("http://{host}:{port}{}", if path.is_empty() { "/" } else { path.as_str() }));
        prop_assert!(!shown.contains(&pass) && !shown.contains('@') && !shown.contains('?'));
        prop_assert_eq!(t.port, port);
        prop_assert_eq!(&t.host, &host);
    }
}
