//! `since` of `x_md_get_profile`: exactly what FxTwitter's `since` query
//! parameter of `/2/profile/{handle}/statuses` accepts.
//!
//! FxEmbed (`src/realms/api/routes.ts`, `profileStatusesV2Route`) declares
//! it `z.coerce.number().finite().min(0)` (Zod 4): the query string goes
//! through JavaScript's `Number(string)` (ECMA-262 StringToNumber), and
//! the result must be a finite number ≥ 0 (NaN and ±Infinity refused;
//! `-0` passes `min(0)`). The handler (`src/realms/api/routes/twitter.ts`,
//! `unixTimestampParamToMs`) reads a value ≥ 1e12 as milliseconds and a
//! smaller one as seconds, and a post is newer when
//! `created_timestamp * 1000 > since_ms`.
//!
//! So `since` takes a JSON number ≥ 0, or a string StringToNumber reads as
//! a finite number ≥ 0: decimal (`1786464342`, `1.5e9`, `.5`, `+7`, `-0`),
//! hexadecimal, octal or binary (`0x6A7B…`, `0o…`, `0b…`), surrounded by
//! any ECMAScript white space or line terminator, or empty or blank (0).
//! Anything else is refused with the bad-argument error.

/// ECMA-262 `WhiteSpace` and `LineTerminator`: what StringToNumber trims
/// (and what `\s` matches in an ECMA-262 pattern). Not Rust's
/// `char::is_whitespace`, which also takes U+0085 and leaves out U+FEFF.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// JavaScript's `Number(s)` for a string: `None` for NaN.
pub fn js_number(s: &str) -> Option<f64> {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return Some(0.0);
    }
    let b = t.as_bytes();
    if b.len() >= 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => Some(16),
            b'o' | b'O' => Some(8),
            b'b' | b'B' => Some(2),
            _ => None,
        };
        if let Some(radix) = radix {
            return non_decimal(&t[2..], radix);
        }
    }
    let (sign, rest) = match b[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if rest == "Infinity" {
        return Some(sign * f64::INFINITY);
    }
    if !is_unsigned_decimal(rest) {
        return None;
    }
    // The grammar is checked: Rust's parser reads the same literal,
    // rounded to nearest as ECMA-262 asks (1e400 → ∞, 1e-400 → 0).
    rest.parse::<f64>().ok().map(|v| sign * v)
}

/// `0x`/`0o`/`0b` digits (no sign, no fraction, at least one digit).
fn non_decimal(digits: &str, radix: u32) -> Option<f64> {
    if digits.is_empty() {
        return None;
    }
    let mut exact: u128 = 0;
    let mut float = 0f64;
    let mut overflowed = false;
    for c in digits.chars() {
        let d = c.to_digit(radix)?;
        float = float * f64::from(radix) + f64::from(d);
        match exact
            .checked_mul(u128::from(radix))
            .and_then(|v| v.checked_add(u128::from(d)))
        {
            Some(v) if !overflowed => exact = v,
            _ => overflowed = true,
        }
    }
    // Exact below 2^128 (one rounding); past it, the running product.
    Some(if overflowed { float } else { exact as f64 })
}

/// ECMA-262 `StrUnsignedDecimalLiteral` without `Infinity`:
/// `digits [. digits?] [exp]` or `. digits [exp]`, exp = `[eE][+-]?digits`.
fn is_unsigned_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        (i, i - start)
    };
    let (mut i, int) = digits(0);
    let mut frac = 0;
    if i < b.len() && b[i] == b'.' {
        let (j, n) = digits(i + 1);
        i = j;
        frac = n;
    }
    if int == 0 && frac == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let (j, n) = digits(i);
        if n == 0 {
            return false;
        }
        i = j;
    }
    i == b.len()
}

/// A `since` as FxTwitter reads it, or `None` when it refuses it: a finite
/// number ≥ 0 (`-0` read as 0).
pub fn parse_since_str(s: &str) -> Option<f64> {
    js_number(s)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v + 0.0)
}

/// [`parse_since_str`] for a JSON argument: a number ≥ 0, or a string.
pub fn parse_since(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n
            .as_f64()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| v + 0.0),
        serde_json::Value::String(s) => parse_since_str(s),
        _ => None,
    }
}

/// The one spelling of a `since` value: the shortest decimal that reads
/// back as the same number (JavaScript's `Number` reads it so too), no
/// exponent. It is what xmd sends upstream and what cursors and the cache
/// key are bound to.
pub fn since_text(v: f64) -> String {
    format!("{v}")
}

/// A `since` in milliseconds, as FxTwitter's handler reads it: a value
/// ≥ 1e12 already is, a smaller one is seconds.
pub fn since_ms(v: f64) -> f64 {
    if v >= 1_000_000_000_000.0 {
        v
    } else {
        v * 1000.0
    }
}

/// Whether a post created at `created_timestamp` (Unix seconds) is newer
/// than `since_ms`, by the upstream's rule (a post without a finite
/// timestamp is not).
pub fn is_newer(created_timestamp: Option<f64>, since_ms: f64) -> bool {
    created_timestamp
        .map(|t| t * 1000.0)
        .is_some_and(|t| t.is_finite() && t > since_ms)
}

/// The refusal text's accepted form.
pub const SINCE_WHAT: &str = "a Unix time, seconds or (from 1e12 on) milliseconds, as a number ≥ 0 or a string JavaScript's Number() reads as a finite number ≥ 0 (e.g. 1786464342 or \"1786464342000\"), as FxTwitter accepts it";

/// An ECMA-262 pattern for the schema: the string forms of a number ≥ 0
/// (`\s` is ECMA-262's white space). It leaves out the two edges only
/// code can judge (a literal so large it reads as Infinity, refused; a
/// negative literal so small it reads as -0, accepted).
pub const SINCE_PATTERN: &str = "^\\s*(?:\\+?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|-(?:0+\\.?0*|\\.0+)(?:[eE][+-]?[0-9]+)?|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)?\\s*$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javascript_number_examples() {
        // Values from the ECMA-262 grammar, as `Number(s)` gives them.
        for (s, v) in [
            ("", Some(0.0)),
            ("  \u{FEFF}\u{3000}", Some(0.0)),
            ("12", Some(12.0)),
            (" 12 ", Some(12.0)),
            ("+12", Some(12.0)),
            ("1.", Some(1.0)),
            (".5", Some(0.5)),
            ("1e3", Some(1000.0)),
            ("1E+3", Some(1000.0)),
            ("0x10", Some(16.0)),
            ("0X1f", Some(31.0)),
            ("0o17", Some(15.0)),
            ("0b101", Some(5.0)),
            ("-0x10", None),
            ("0x", None),
            ("0b2", None),
            ("1e", None),
            (".", None),
            ("+", None),
            ("1 2", None),
            ("Infinity", Some(f64::INFINITY)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("infinity", None),
            ("NaN", None),
            ("1_000", None),
            ("\u{85}1", None),
            ("١", None),
        ] {
            assert_eq!(js_number(s), v, "{s:?}");
        }
    }

    #[test]
    fn since_is_finite_and_not_negative() {
        assert_eq!(parse_since_str("-0"), Some(0.0));
        assert!(parse_since_str("-0").unwrap().is_sign_positive());
        assert_eq!(parse_since_str("-1e-400"), Some(0.0));
        assert_eq!(parse_since_str("-1"), None);
        assert_eq!(parse_since_str("1e400"), None);
        assert_eq!(parse_since_str("Infinity"), None);
        assert_eq!(
            parse_since(&serde_json::json!(1786464342)),
            Some(1786464342.0)
        );
        assert_eq!(parse_since(&serde_json::json!(-1)), None);
        assert_eq!(parse_since(&serde_json::json!(true)), None);
        assert_eq!(since_text(1786464342.0), "1786464342");
        assert_eq!(since_text(0.5), "0.5");
        assert_eq!(since_ms(1786464342.0), 1786464342000.0);
        assert_eq!(since_ms(1786464342000.0), 1786464342000.0);
        assert!(is_newer(Some(1786464343.0), 1786464342000.0));
        assert!(!is_newer(Some(1786464342.0), 1786464342000.0));
        assert!(!is_newer(None, 0.0));
    }
}
