//! The chunked decoder's extension and trailer checks against RFC 9112's
//! ABNF (§7.1.1 `chunk-ext`, §7.1.2 trailer `field-line`, with RFC 9110
//! §5.6 `token`, `quoted-string`, `BWS`), written here as byte regexes: a
//! generated extension or trailer line is accepted exactly when the
//! grammar matches it. Before, any byte but CR, LF and NUL passed
//! (`28 garbage`, `Bad Trailer\x01: x`, an obs-fold trailer).

use proptest::prelude::*;
use regex::bytes::Regex;
use xmd::http::chunked::ChunkedDecoder;

const TOKEN: &str = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+";
const BWS: &str = r"[ \t]*";

fn quoted() -> String {
    r#""(?:[\t \x21\x23-\x5B\x5D-\x7E\x80-\xFF]|\\[\t \x21-\x7E\x80-\xFF])*""#.to_string()
}

/// `chunk-ext`, plus white space before the CR (read as `BWS`).
fn chunk_ext() -> Regex {
    let one = format!("{BWS};{BWS}{TOKEN}(?:{BWS}={BWS}(?:{TOKEN}|{}))?", quoted());
    Regex::new(&format!(r"(?-u)\A(?:{one})*{BWS}\z")).unwrap()
}

/// `field-line`: `field-name ":" OWS field-value OWS`.
fn field_line() -> Regex {
    Regex::new(&format!(r"(?-u)\A{TOKEN}:[\t \x21-\x7E\x80-\xFF]*\z")).unwrap()
}

/// Bytes built from the grammar's pieces and from any byte but CR, LF and
/// NUL (the decoder refuses those by its line rules, before any grammar).
fn line() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        3 => prop::sample::select(vec![
            &b";"[..], b"=", b" ", b"\t", b"\"", b"\\", b":", b"name", b"v-1", b"\"q d\"", b"\"a\\\"b\"",
            b"X-T", b"\x7f", b"\x01", b"\xc3\xa9", b"@", b",", b"(",
        ])
        .prop_map(<[u8]>::to_vec),
        1 => (1u8..=255)
            .prop_filter("CR, LF", |b| *b != b'\r' && *b != b'\n')
            .prop_map(|b| vec![b]),
    ];
    prop::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

fn accepted(raw: &[u8]) -> bool {
    let mut d = ChunkedDecoder::new(1 << 16);
    d.feed(raw).is_ok_and(|n| n == raw.len()) && d.is_done()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chunk_extensions_follow_the_grammar(ext in line()) {
        let mut raw = b"5".to_vec();
        raw.extend_from_slice(&ext);
        raw.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
        prop_assert_eq!(accepted(&raw), chunk_ext().is_match(&ext), "{:?}", String::from_utf8_lossy(&ext));
    }

    #[test]
    fn trailer_lines_follow_the_grammar(field in line()) {
        prop_assume!(!field.is_empty());
        let mut raw = b"0\r\n".to_vec();
        raw.extend_from_slice(&field);
        raw.extend_from_slice(b"\r\n\r\n");
        prop_assert_eq!(accepted(&raw), field_line().is_match(&field), "{:?}", String::from_utf8_lossy(&field));
    }
}

/// The reported shapes.
#[test]
fn reported_cases() {
    for bad in [
        &b"28 garbage\r\n"[..],
        b"0\r\nBad Trailer\x01: x\r\n\r\n",
        b"0\r\n folded: x\r\n\r\n",
    ] {
        let mut d = ChunkedDecoder::new(1 << 16);
        assert_eq!(
            d.feed(bad).map_err(|r| r.status),
            Err(400),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    // A Content-Length trailer is a well-formed field line: discarded.
    assert!(accepted(b"0\r\nContent-Length: 5\r\n\r\n"));
    assert!(accepted(b"5 ; a = \"b \\\" c\" ;d\t\r\nhello\r\n0\r\n\r\n"));
}
