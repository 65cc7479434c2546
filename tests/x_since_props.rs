//! Issue 31: `since` of `x_md_get_profile` accepts exactly what
//! FxTwitter's `since` accepts, and refuses anything else with the
//! bad-argument error.
//!
//! FxTwitter's rule (FxEmbed `src/realms/api/routes.ts`,
//! `profileStatusesV2Route`): `z.coerce.number().finite().min(0)` (Zod 4),
//! i.e. JavaScript's `Number(string)` (ECMA-262 §7.1.4.1.1
//! StringToNumber), then finite and ≥ 0. The oracle below is written from
//! the ECMA-262 grammar, independently of xmd's parser: the white space
//! set from the spec's WhiteSpace and LineTerminator productions (Unicode
//! `Zs` from the regex crate's tables), `StrNumericLiteral` as one regex,
//! the decimal value from Rust's correctly rounded parser, the
//! non-decimal ones from exact integers.
//!
//! Generated: strings built from pieces of the grammar and near misses
//! (signs on hex, `_` separators, `infinity`, NEL and U+180E around the
//! number, lone `.`/`e`, huge exponents), and JSON numbers of any sign.
//! Accepted: the call is prepared and `since` is the oracle's value;
//! refused: `-32602`'s message names `since`.

use proptest::prelude::*;
use regex::Regex;
use serde_json::{json, Value};
use xmd::x::args::parse_profile;
use xmd::x::tools::{PrepareError, Tools};

/// ECMA-262 StringToNumber of `s`: `None` for NaN.
fn oracle(s: &str) -> Option<f64> {
    let ws = Regex::new(r"(?s)^[\t\x0B\x0C \u{A0}\u{FEFF}\p{Zs}\n\r\u{2028}\u{2029}]*(.*?)[\t\x0B\x0C \u{A0}\u{FEFF}\p{Zs}\n\r\u{2028}\u{2029}]*$").unwrap();
    let t = ws
        .captures(s)
        .map(|c| c.get(1).unwrap().as_str())
        .unwrap_or(s);
    let grammar = Regex::new(
        r"^(?:(?P<dec>[+-]?(?:Infinity|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?))|0[xX](?P<hex>[0-9a-fA-F]+)|0[oO](?P<oct>[0-7]+)|0[bB](?P<bin>[01]+))?$",
    )
    .unwrap();
    let c = grammar.captures(t)?;
    if t.is_empty() {
        return Some(0.0);
    }
    if let Some(d) = c.name("dec") {
        let d = d.as_str();
        return Some(match d.trim_start_matches(['+', '-']) {
            "Infinity" if d.starts_with('-') => f64::NEG_INFINITY,
            "Infinity" => f64::INFINITY,
            _ => d.parse::<f64>().unwrap(),
        });
    }
    let (digits, radix) = match (c.name("hex"), c.name("oct"), c.name("bin")) {
        (Some(h), _, _) => (h.as_str(), 16),
        (_, Some(o), _) => (o.as_str(), 8),
        (_, _, Some(b)) => (b.as_str(), 2),
        _ => unreachable!(),
    };
    // Exact when it fits 128 bits; past that only "finite or not" is
    // judged ([`BIG`]): a value of more than 1024 bits is infinite (the
    // generator makes none of exactly 1024).
    match u128::from_str_radix(digits, radix) {
        Ok(v) => Some(v as f64),
        Err(_) => {
            let bits = digits.trim_start_matches('0').len() as f64 * f64::from(radix).log2();
            Some(if bits > 1024.0 { f64::INFINITY } else { BIG })
        }
    }
}

/// The oracle's value of a finite non-decimal literal past 128 bits: its
/// value is not judged, only its acceptance.
const BIG: f64 = f64::MAX;

/// FxTwitter's verdict: the value when accepted.
fn upstream_accepts(s: &str) -> Option<f64> {
    oracle(s).filter(|v| v.is_finite() && *v >= 0.0)
}

fn space() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            " ", "\t", "\n", "\r", "\u{B}", "\u{C}", "\u{A0}", "\u{FEFF}", "\u{2003}", "\u{3000}",
            "\u{2028}", "\u{202F}", "\u{1680}",
            // Not ECMAScript white space: refused around a number.
            "\u{85}", "\u{180E}", "\u{200B}",
        ]),
        0..3,
    )
    .prop_map(|v| v.concat())
}

fn digits(alphabet: &'static str, max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(alphabet.chars().collect::<Vec<_>>()),
        0..max,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn body() -> impl Strategy<Value = String> {
    let sign = prop::sample::select(vec!["", "", "+", "-"]);
    let decimal = (
        sign.clone(),
        digits("0123456789", 14),
        prop::option::of(digits("0123456789", 5)),
        prop::option::of((
            prop::sample::select(vec!["e", "E"]),
            prop::sample::select(vec!["", "+", "-"]),
            digits("0123456789", 4),
        )),
    )
        .prop_map(|(s, i, f, e)| {
            let mut out = format!("{s}{i}");
            if let Some(f) = f {
                out.push('.');
                out.push_str(&f);
            }
            if let Some((e, es, ed)) = e {
                out.push_str(e);
                out.push_str(es);
                out.push_str(&ed);
            }
            out
        });
    let radix = (
        sign,
        prop::sample::select(vec!["0x", "0X", "0o", "0O", "0b", "0B", "0"]),
        digits("0123456789abcdefABCDEF_", 20),
    )
        .prop_map(|(s, p, d)| format!("{s}{p}{d}"));
    prop_oneof![
        6 => decimal,
        3 => radix,
        1 => prop::sample::select(
            ["Infinity", "-Infinity", "+Infinity", "infinity", "NaN", "1e400", "-1e-400", "1_000", "0x1p3", "١٢", "12abc", "--1", "1.2.3", ".e1", "0x"]
                .iter()
                .map(|s| s.to_string())
                .chain(["9".repeat(400), format!("0x{}", "f".repeat(300)), format!("0x{}", "f".repeat(200))])
                .collect::<Vec<String>>()
        ),
        1 => "[0-9a-fxXeE+. -]{0,10}",
    ]
}

fn candidate() -> impl Strategy<Value = String> {
    (space(), body(), space()).prop_map(|(a, b, c)| format!("{a}{b}{c}"))
}

fn verdict(since: Value) -> Result<f64, String> {
    let args = json!({"handle": "demo_author", "since": since});
    match Tools::prepare("x_md_get_profile", Some(&args)) {
        Ok(_) => {
            let a = parse_profile(Some(&args)).expect("prepared, so parsed");
            let v = a.since_value().expect("a since");
            // Its one spelling reads back as the value.
            assert_eq!(a.since.as_deref().unwrap().parse::<f64>().unwrap(), v);
            Ok(v)
        }
        Err(PrepareError::InvalidArguments(m)) => Err(m),
        Err(e) => panic!("{e:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_string_since_is_accepted_exactly_when_fxtwitter_accepts_it(s in candidate()) {
        match (upstream_accepts(&s), verdict(json!(s))) {
            (Some(BIG), Ok(_)) => {}
            (Some(want), Ok(got)) => prop_assert_eq!(got, want + 0.0, "{:?}", s),
            (None, Err(m)) => prop_assert!(m.starts_with("`since` must be a Unix time"), "{:?}: {}", s, m),
            (want, got) => prop_assert!(false, "{:?}: FxTwitter {:?}, xmd {:?}", s, want, got),
        }
    }

    #[test]
    fn a_number_since_is_accepted_exactly_when_it_is_not_negative(v in prop_oneof![any::<f64>().prop_filter("finite", |v| v.is_finite()), -2e12f64..2e12, Just(-0.0), Just(0.0)]) {
        // A JSON number reaches FxTwitter as its decimal text.
        match (upstream_accepts(&format!("{v}")), verdict(json!(v))) {
            (Some(want), Ok(got)) => prop_assert_eq!(got, want + 0.0),
            (None, Err(m)) => prop_assert!(m.starts_with("`since` must be a Unix time"), "{}: {}", v, m),
            (want, got) => prop_assert!(false, "{}: FxTwitter {:?}, xmd {:?}", v, want, got),
        }
    }
}

#[test]
fn the_oracle_reads_the_specs_examples() {
    assert_eq!(oracle(""), Some(0.0));
    assert_eq!(oracle(" \u{FEFF}12\u{2029}"), Some(12.0));
    assert_eq!(oracle("0x1F"), Some(31.0));
    assert_eq!(oracle("-0x1F"), None);
    assert_eq!(oracle("1."), Some(1.0));
    assert_eq!(oracle("."), None);
    assert_eq!(oracle("\u{85}1"), None);
    assert_eq!(upstream_accepts("-0"), Some(-0.0));
    assert_eq!(upstream_accepts("1e400"), None);
    assert_eq!(upstream_accepts(&format!("0x{}", "f".repeat(300))), None);
}
