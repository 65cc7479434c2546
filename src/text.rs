//! Small text helpers every layer uses, kept once here. A leaf: it imports
//! nothing from the crate.

use std::borrow::Cow;

/// The first `max` characters (Unicode scalar values) of `s`, followed by
/// `…` when `s` was longer (so a reader knows it was cut); `s` itself,
/// borrowed, when it fits. For echoing a value inside an error message.
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((at, _)) => Cow::Owned(format!("{}…", &s[..at])),
    }
}

/// [`clip`] after every control character became a space: for text from a
/// third party (the upstream) echoed inside one line, which a newline or
/// an escape sequence must not reshape.
pub fn clip_inert(s: &str, max: usize) -> String {
    let inert: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    clip(&inert, max).into_owned()
}

/// Trims optional whitespace (`OWS`: SP and HTAB, RFC 9110 §5.6.3) from
/// both ends of a field value; nothing else (not CR or LF).
pub fn trim_ows(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t'))
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// The lowercase hexadecimal digits, by value.
pub const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Appends the two lowercase hex digits of each byte of `bytes`:
/// `format!("{b:02x}")` per byte without the formatting machinery.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(HEX_DIGITS[usize::from(b >> 4)]));
        out.push(char::from(HEX_DIGITS[usize::from(b & 0xf)]));
    }
}

/// Appends the decimal digits of `n` (no sign, no separators), two at a
/// time.
pub fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + n as u8;
    }
    out.extend_from_slice(&digits[i..]);
}

/// `00` to `99`, two bytes each.
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut k = 0;
    while k < 100 {
        t[2 * k] = b'0' + (k / 10) as u8;
        t[2 * k + 1] = b'0' + (k % 10) as u8;
        k += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    #[test]
    fn push_u64_writes_what_display_writes() {
        let mut ns = vec![0, 9, 10, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1];
        ns.extend((0..64).map(|p| 1u64 << p));
        ns.extend((0..20).map(|p| 10u64.pow(p)));
        ns.extend((1..20).map(|p| 10u64.pow(p) - 1));
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ns.push(x >> (x % 64));
        }
        for n in ns {
            let mut out = b"x".to_vec();
            push_u64(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes());
        }
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn clip_cuts_at_characters_and_marks_the_cut() {
        assert_eq!(clip("short", 200), "short");
        assert!(matches!(clip("short", 200), Cow::Borrowed(_)));
        let exact = "é".repeat(40);
        assert_eq!(clip(&exact, 40), exact.as_str());
        assert_eq!(clip(&"é".repeat(41), 40), format!("{}…", "é".repeat(40)));
        assert_eq!(clip("abc", 0), "…");
        assert_eq!(clip("", 0), "");
    }

    #[test]
    fn clip_inert_blanks_control_characters() {
        assert_eq!(clip_inert("a\nb\u{1b}[31m\tc\u{85}", 200), "a b [31m c ");
        assert_eq!(clip_inert("x\ny\nz", 2), "x …");
    }

    #[test]
    fn trim_ows_trims_spaces_and_tabs_only() {
        assert_eq!(trim_ows(b" \t a b \t"), b"a b");
        assert_eq!(trim_ows(b"   "), b"");
        assert_eq!(trim_ows(b""), b"");
        assert_eq!(trim_ows(b"\r\na\r\n"), b"\r\na\r\n");
        assert_eq!(trim_ows(b" \t "), b"");
    }

    proptest! {
        /// Oracle: the characters, counted and compared one by one.
        #[test]
        fn clip_keeps_a_prefix_of_at_most_max_characters(s in "\\PC{0,60}", max in 0usize..50) {
            let chars: Vec<char> = s.chars().collect();
            let out = clip(&s, max);
            if chars.len() <= max {
                prop_assert_eq!(out.as_ref(), s.as_str());
            } else {
                let kept: String = chars[..max].iter().collect();
                prop_assert_eq!(out.into_owned(), format!("{kept}…"));
            }
            let inert = clip_inert(&s, max);
            prop_assert!(!inert.chars().any(char::is_control));
            prop_assert!(inert.chars().count() <= max + 1);
        }

        /// Oracle: `str::trim_matches` over the two OWS characters.
        #[test]
        fn trim_ows_matches_trim_matches(s in "[ \\ta-z\\r\\n]{0,20}") {
            let expected = s.trim_matches([' ', '\t']);
            prop_assert_eq!(trim_ows(s.as_bytes()), expected.as_bytes());
        }

        /// Oracle: the formatting machinery, `{:02x}` per byte, after
        /// whatever the string held.
        #[test]
        fn push_hex_matches_format(before in "\\PC{0,8}", bytes in proptest::collection::vec(any::<u8>(), 0..70)) {
            let mut out = before.clone();
            push_hex(&mut out, &bytes);
            let want: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            prop_assert_eq!(out, format!("{before}{want}"));
        }
    }
}
