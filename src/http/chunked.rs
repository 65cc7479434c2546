//! Incremental decoder for the `chunked` transfer coding (RFC 9112 §7.1).
//!
//! Strict by design: every line ends in CRLF, chunk sizes are at most
//! [`MAX_CHUNK_SIZE_DIGITS`] hex digits, extensions must match `chunk-ext`
//! and trailer lines `field-line` (RFC 9112 §7.1.1, §7.1.2; RFC 9110 §5.6)
//! within [`MAX_CHUNK_LINE_BYTES`] / [`MAX_TRAILER_BYTES`] and are then
//! discarded, and the decoded body never grows past the caller's cap. Any
//! deviation is a [`Rejection`]; the caller answers it and closes the
//! connection.

use super::parse::Rejection;

/// Most hex digits in a chunk size (16 digits = 64 bits).
///
/// Default is 16. More digits are answered `400` (chunk-size overflow).
pub const MAX_CHUNK_SIZE_DIGITS: usize = 16;

/// Longest chunk-size line, extensions included.
///
/// Default is 1 KiB. Longer lines are answered `400`.
pub const MAX_CHUNK_LINE_BYTES: usize = 1024;

/// Most trailer-section bytes.
///
/// Default is 16 KiB. More are answered `431`.
pub const MAX_TRAILER_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading hex digits of a chunk size.
    Size {
        digits: usize,
        value: u64,
        line: usize,
    },
    /// Inside a chunk extension, up to CR.
    Extension { value: u64, line: usize },
    /// Saw CR after a size line; LF must follow.
    SizeLf { value: u64 },
    /// Copying chunk data; this many bytes remain.
    Data { remaining: u64 },
    /// CR after chunk data.
    DataCr,
    /// LF after chunk data.
    DataLf,
    /// At the start of a trailer line (or the final CRLF).
    TrailerStart,
    /// Inside a trailer field line.
    TrailerLine,
    /// Saw CR ending a trailer line; LF must follow.
    TrailerLf { empty: bool },
    /// The message body is complete.
    Done,
}

/// Decodes one chunked body, fed in pieces.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    max_body_bytes: usize,
    trailer_bytes: usize,
    body: Vec<u8>,
    /// The extension or trailer line being read, checked at its CR.
    line: Vec<u8>,
}

impl ChunkedDecoder {
    /// A decoder whose decoded body may not exceed `max_body_bytes`.
    pub fn new(max_body_bytes: usize) -> ChunkedDecoder {
        ChunkedDecoder {
            state: State::Size {
                digits: 0,
                value: 0,
                line: 0,
            },
            max_body_bytes,
            trailer_bytes: 0,
            body: Vec::new(),
            line: Vec::new(),
        }
    }

    /// Whether the final chunk and trailer section have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Bytes of body decoded so far.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// Takes the decoded body (call once `is_done`).
    pub fn into_body(self) -> Vec<u8> {
        self.body
    }

    /// Consumes bytes from `input` and returns how many were used. Stops
    /// right after the message ends, so bytes of a pipelined next request
    /// are left unconsumed.
    ///
    /// # Errors
    /// 400 for malformed framing or size overflow, 413 when the decoded body
    /// passes the cap, 431 for an oversized trailer section.
    pub fn feed(&mut self, input: &[u8]) -> Result<usize, Rejection> {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.state {
                State::Done => return Ok(i),
                State::Size {
                    digits,
                    value,
                    line,
                } => {
                    let line = line + 1;
                    if line > MAX_CHUNK_LINE_BYTES {
                        return Err(bad("chunk-size line too long"));
                    }
                    if let Some(d) = hex_value(b) {
                        if digits == MAX_CHUNK_SIZE_DIGITS {
                            return Err(bad("chunk size overflow"));
                        }
                        let value = (value << 4) | u64::from(d);
                        self.state = State::Size {
                            digits: digits + 1,
                            value,
                            line,
                        };
                    } else if digits == 0 {
                        return Err(bad("chunk size missing"));
                    } else if b == b';' || b == b' ' || b == b'\t' {
                        self.line.clear();
                        self.line.push(b);
                        self.state = State::Extension { value, line };
                    } else if b == b'\r' {
                        self.state = State::SizeLf { value };
                    } else {
                        return Err(bad("invalid chunk size"));
                    }
                    i += 1;
                }
                State::Extension { value, line } => {
                    let line = line + 1;
                    if line > MAX_CHUNK_LINE_BYTES {
                        return Err(bad("chunk extension too long"));
                    }
                    match b {
                        b'\r' if !is_chunk_ext(&self.line) => {
                            return Err(bad("invalid chunk extension"))
                        }
                        b'\r' => self.state = State::SizeLf { value },
                        b'\n' | 0 => return Err(bad("bare LF or NUL in chunk extension")),
                        _ => {
                            self.line.push(b);
                            self.state = State::Extension { value, line };
                        }
                    }
                    i += 1;
                }
                State::SizeLf { value } => {
                    if b != b'\n' {
                        return Err(bad("chunk-size line not ended by CRLF"));
                    }
                    i += 1;
                    if value == 0 {
                        self.state = State::TrailerStart;
                    } else {
                        let room = (self.max_body_bytes - self.body.len()) as u64;
                        if value > room {
                            return Err(Rejection {
                                status: 413,
                                reason: "request body too large",
                            });
                        }
                        self.state = State::Data { remaining: value };
                    }
                }
                State::Data { remaining } => {
                    let take = remaining.min((input.len() - i) as u64) as usize;
                    self.body.extend_from_slice(&input[i..i + take]);
                    i += take;
                    let remaining = remaining - take as u64;
                    self.state = if remaining == 0 {
                        State::DataCr
                    } else {
                        State::Data { remaining }
                    };
                }
                State::DataCr => {
                    if b != b'\r' {
                        return Err(bad("chunk data not followed by CRLF"));
                    }
                    self.state = State::DataLf;
                    i += 1;
                }
                State::DataLf => {
                    if b != b'\n' {
                        return Err(bad("chunk data not followed by CRLF"));
                    }
                    self.state = State::Size {
                        digits: 0,
                        value: 0,
                        line: 0,
                    };
                    i += 1;
                }
                State::TrailerStart | State::TrailerLine => {
                    self.trailer_bytes += 1;
                    if self.trailer_bytes > MAX_TRAILER_BYTES {
                        return Err(Rejection {
                            status: 431,
                            reason: "trailer section too large",
                        });
                    }
                    let empty = self.state == State::TrailerStart;
                    if empty {
                        self.line.clear();
                    }
                    match b {
                        b'\r' if !empty && !is_field_line(&self.line) => {
                            return Err(bad("invalid trailer field line"))
                        }
                        b'\r' => self.state = State::TrailerLf { empty },
                        b'\n' | 0 => return Err(bad("bare LF or NUL in trailer")),
                        _ => {
                            self.line.push(b);
                            self.state = State::TrailerLine;
                        }
                    }
                    i += 1;
                }
                State::TrailerLf { empty } => {
                    if b != b'\n' {
                        return Err(bad("trailer line not ended by CRLF"));
                    }
                    i += 1;
                    self.state = if empty {
                        State::Done
                    } else {
                        State::TrailerStart
                    };
                    if empty {
                        return Ok(i);
                    }
                }
            }
        }
        Ok(i)
    }
}

fn bad(reason: &'static str) -> Rejection {
    Rejection {
        status: 400,
        reason,
    }
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Index of the first byte of `s` from `i` on that is not `SP` or `HTAB`
/// (RFC 9110 §5.6.3 `BWS`/`OWS`).
fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
        i += 1;
    }
    i
}

/// Index past a `token` starting at `i`, if there is one.
fn token_end(s: &[u8], i: usize) -> Option<usize> {
    let end = i + s[i..].iter().take_while(|b| is_tchar(**b)).count();
    (end > i).then_some(end)
}

/// Index past a `quoted-string` starting at `i` (RFC 9110 §5.6.4), if
/// there is one.
fn quoted_end(s: &[u8], i: usize) -> Option<usize> {
    if s.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match *s.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => {
                let c = *s.get(j + 1)?;
                if !(c == b'\t' || c == b' ' || c >= 0x21 && c != 0x7F) {
                    return None;
                }
                j += 2;
            }
            c if c == b'\t' || c == b' ' || (c >= 0x21 && c != 0x7F) => j += 1,
            _ => return None,
        }
    }
}

/// Whether `s` (what follows the chunk size, up to its CR) is a `chunk-ext`
/// (RFC 9112 §7.1.1): `*( BWS ";" BWS name [ BWS "=" BWS value ] )`, the
/// name a `token`, the value a `token` or `quoted-string`; white space
/// before the CR is taken as `BWS` too.
fn is_chunk_ext(s: &[u8]) -> bool {
    let mut i = skip_ws(s, 0);
    while i < s.len() {
        if s[i] != b';' {
            return false;
        }
        let Some(end) = token_end(s, skip_ws(s, i + 1)) else {
            return false;
        };
        i = skip_ws(s, end);
        if s.get(i) == Some(&b'=') {
            let v = skip_ws(s, i + 1);
            let Some(end) = token_end(s, v).or_else(|| quoted_end(s, v)) else {
                return false;
            };
            i = skip_ws(s, end);
        }
    }
    true
}

/// Whether `s` (a trailer line without its CRLF) is a `field-line` (RFC
/// 9112 §5, RFC 9110 §5.5): a `token` name, `:`, then only `SP`, `HTAB`,
/// visible characters and obs-text. A line starting with white space
/// (obs-fold) is not one.
fn is_field_line(s: &[u8]) -> bool {
    let Some(end) = token_end(s, 0) else {
        return false;
    };
    s.get(end) == Some(&b':')
        && s[end + 1..]
            .iter()
            .all(|&c| c == b'\t' || c == b' ' || (c >= 0x21 && c != 0x7F))
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8], cap: usize) -> Result<(usize, Vec<u8>), Rejection> {
        let mut d = ChunkedDecoder::new(cap);
        let n = d.feed(input)?;
        assert!(d.is_done(), "not done after {n} bytes");
        Ok((n, d.into_body()))
    }

    #[test]
    fn decodes_chunks_extensions_and_trailers() {
        let raw = b"5;name=val\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        let (n, body) = decode_all(raw, 100).unwrap();
        assert_eq!(body, b"hello world");
        assert_eq!(&raw[n..], b"NEXT");
    }

    #[test]
    fn same_result_for_every_split_point() {
        let raw = b"A\r\n0123456789\r\n1\r\nx\r\n0\r\n\r\n";
        for split in 0..raw.len() {
            let mut d = ChunkedDecoder::new(100);
            let a = d.feed(&raw[..split]).unwrap();
            assert_eq!(a, split);
            let b = d.feed(&raw[split..]).unwrap();
            assert_eq!(a + b, raw.len());
            assert!(d.is_done());
            assert_eq!(d.into_body(), b"0123456789x");
        }
    }

    #[test]
    fn rejects_malformed_framing() {
        for raw in [
            &b"G\r\n"[..],
            b"\r\n",
            b"5\nhello\r\n",
            b"5\r\nhelloXX",
            b"11111111111111111\r\n",
            b"0\r\nX: a\n",
            b"5;ext\nhello",
            b"-1\r\n",
        ] {
            let mut d = ChunkedDecoder::new(1 << 20);
            assert_eq!(
                d.feed(raw).unwrap_err().status,
                400,
                "{:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn body_cap_is_enforced_before_copying() {
        let mut d = ChunkedDecoder::new(8);
        assert_eq!(d.feed(b"4\r\nabcd\r\n5\r\n").unwrap_err().status, 413);
        let mut d = ChunkedDecoder::new(8);
        assert_eq!(d.feed(b"FFFFFFFFFFFFFFFF\r\n").unwrap_err().status, 413);
    }
}
