//! An incremental `text/event-stream` decoder (WHATWG HTML §9.2.6
//! "Interpreting an event stream"), fed with arbitrary byte chunks.
//!
//! Lines end in CRLF, LF or CR (a CR at the end of one chunk followed by an
//! LF at the start of the next is one line end). Lines starting with `:` are
//! comments. `data` lines accumulate, joined by `\n`; a blank line
//! dispatches the event. An event whose `data` is empty (a priming event or
//! keep-alive) is not dispatched. A leading UTF-8 BOM is dropped. Bytes are
//! decoded as UTF-8 with replacement characters, line by line, so a chunk
//! boundary inside a multi-byte character is harmless.

/// Largest event the client accepts: 16 MiB, counting the pending line and
/// the accumulated `data`. A bigger event ends the read with
/// [`SseError::EventTooLarge`] (the caller reports a protocol violation);
/// the limit bounds memory against a server that never ends an event.
pub const MAX_SSE_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field; `"message"` when absent or empty.
    pub event: String,
    /// The `data` lines joined by `\n` (never empty).
    pub data: String,
    /// The last event id seen so far in the stream, if any.
    pub id: Option<String>,
}

/// Why decoding stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// The current event (pending line plus data) passed the limit, in bytes.
    EventTooLarge(usize),
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::EventTooLarge(limit) => {
                write!(f, "SSE event larger than {limit} bytes")
            }
        }
    }
}

impl std::error::Error for SseError {}

/// The decoder state between chunks.
#[derive(Debug)]
pub struct SseDecoder {
    limit: usize,
    line: Vec<u8>,
    /// The previous chunk ended in CR: a leading LF in the next one is part
    /// of the same line end.
    after_cr: bool,
    /// Still at the very start of the stream (BOM check pending).
    at_start: bool,
    data: String,
    event: String,
    /// The `id` field of the event being built (the spec's "last event ID
    /// buffer"); it becomes `last_id` only when an event is dispatched, so
    /// a stream cut inside an event resumes from the previous whole one.
    id_buffer: Option<String>,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

impl SseDecoder {
    /// A decoder with the [`MAX_SSE_EVENT_BYTES`] limit.
    pub fn new() -> SseDecoder {
        SseDecoder::with_limit(MAX_SSE_EVENT_BYTES)
    }

    /// A decoder with a custom event size limit in bytes.
    pub fn with_limit(limit: usize) -> SseDecoder {
        SseDecoder {
            limit,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            data: String::new(),
            event: String::new(),
            id_buffer: None,
            last_id: None,
            retry_ms: None,
        }
    }

    /// The last `retry` value (milliseconds) the stream announced.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// The last event id the stream announced (for `Last-Event-ID`).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds the next chunk and returns the events it completed, in order.
    ///
    /// # Errors
    /// [`SseError::EventTooLarge`] once the event being built passes the
    /// limit; the decoder should then be dropped.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        if self.at_start {
            // The BOM may itself be split across chunks: wait for 3 bytes.
            let mut probe = std::mem::take(&mut self.line);
            probe.extend_from_slice(chunk);
            if probe.len() < 3 && b"\xEF\xBB\xBF".starts_with(&probe) {
                self.line = probe;
                return Ok(out);
            }
            self.at_start = false;
            let rest = probe.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&probe);
            return self.feed_lines(rest, out);
        }
        if chunk.is_empty() {
            return Ok(out);
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        out = self.feed_lines(chunk, out)?;
        Ok(out)
    }

    fn feed_lines(
        &mut self,
        mut chunk: &[u8],
        mut out: Vec<SseEvent>,
    ) -> Result<Vec<SseEvent>, SseError> {
        while let Some(pos) = chunk.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&chunk[..pos]);
            self.check_size()?;
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out);
            let cr = chunk[pos] == b'\r';
            chunk = &chunk[pos + 1..];
            if cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.line.extend_from_slice(chunk);
        self.check_size()?;
        Ok(out)
    }

    fn check_size(&self) -> Result<(), SseError> {
        if self.line.len() + self.data.len() > self.limit {
            Err(SseError::EventTooLarge(self.limit))
        } else {
            Ok(())
        }
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => self.event = value.to_string(),
            // An empty `id` resets it: nothing to resume from.
            "id" if !value.contains('\0') => {
                self.id_buffer = (!value.is_empty()).then(|| value.to_string());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        // The whole event arrived: its id is now the one to resume after
        // (HTML "dispatch the event", step 1, before the empty-data check,
        // so a priming event's id counts).
        self.last_id.clone_from(&self.id_buffer);
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        if data.is_empty() {
            // `data:` with an empty value: a priming event or keep-alive.
            return;
        }
        out.push(SseEvent {
            event: if event.is_empty() {
                "message".into()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.map(str::to_string),
        }
    }

    fn all(input: &[u8]) -> Vec<SseEvent> {
        SseDecoder::new().feed(input).unwrap()
    }

    /// Feeds `input` split at every pair of positions and checks the result
    /// never depends on where the chunks end.
    fn split_everywhere(input: &[u8], want: &[SseEvent]) {
        assert_eq!(all(input), want, "whole input");
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let mut d = SseDecoder::new();
                let mut got = d.feed(&input[..i]).unwrap();
                got.extend(d.feed(&input[i..j]).unwrap());
                got.extend(d.feed(&input[j..]).unwrap());
                assert_eq!(got, want, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn single_message_frame() {
        let input = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        split_everywhere(
            input,
            &[ev(
                "message",
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                None,
            )],
        );
    }

    #[test]
    fn split_anywhere_with_comments_ids_and_unicode() {
        let input = ": keep-alive\r\nid: 7\r\nevent: message\r\ndata: h\u{e9}llo \u{4e16}\r\n\r\n:\r\ndata: two\r\n\r\n"
            .as_bytes();
        split_everywhere(
            input,
            &[
                ev("message", "h\u{e9}llo \u{4e16}", Some("7")),
                ev("message", "two", Some("7")),
            ],
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        split_everywhere(
            b"data: first\ndata:second\ndata:  third\n\n",
            &[ev("message", "first\nsecond\n third", None)],
        );
    }

    #[test]
    fn crlf_cr_and_lf_line_ends_mix() {
        let want = [ev("a", "1", None), ev("message", "2\n3", None)];
        split_everywhere(b"event: a\rdata: 1\r\rdata: 2\r\ndata: 3\n\r\n", &want);
        split_everywhere(
            b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\ndata: 3\r\n\r\n",
            &want,
        );
        split_everywhere(b"event: a\ndata: 1\n\ndata: 2\ndata: 3\n\n", &want);
    }

    #[test]
    fn cr_at_chunk_end_then_lf_is_one_line_end() {
        let mut d = SseDecoder::new();
        assert_eq!(d.feed(b"data: x\r").unwrap(), vec![]);
        // An empty chunk in between must not forget the pending CR.
        assert_eq!(d.feed(b"").unwrap(), vec![]);
        // Had the LF counted as a second (blank) line, "x" would dispatch here.
        assert_eq!(d.feed(b"\n").unwrap(), vec![]);
        assert_eq!(d.feed(b"\r\n").unwrap(), vec![ev("message", "x", None)]);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        split_everywhere(
            b": hello\n:\nfoo: bar\nretry: 1500\nnocolon\ndata: x\n\n",
            &[ev("message", "x", None)],
        );
        let mut d = SseDecoder::new();
        d.feed(b"retry: 1500\nretry: soon\n").unwrap();
        assert_eq!(d.retry_ms(), Some(1500));
    }

    #[test]
    fn empty_data_events_are_not_dispatched_but_keep_the_id() {
        let got = all(b"id: prime-1\ndata:\n\nevent: ping\n\ndata: real\n\n");
        assert_eq!(got, vec![ev("message", "real", Some("prime-1"))]);
    }

    /// The id to resume after is that of the last whole event: a stream
    /// cut inside an event (after its `id` line, before its blank line)
    /// resumes from the event before, so the cut one is sent again; an
    /// empty `id` leaves nothing to resume from (HTML SSE, "dispatch the
    /// event" and the `id` field). Checked at every cut point.
    #[test]
    fn resumption_id_is_the_last_whole_events() {
        let stream: &[u8] =
            b"id: 1\ndata:\n\nid: 2\ndata: {\"jsonrpc\":\"2.0\"}\n\nid:\ndata: x\n\n";
        let first_blank = 13; // after "id: 1\ndata:\n\n"
        let second_blank = stream.windows(2).rposition(|w| w == b"}\n").unwrap() + 3;
        for cut in 0..=stream.len() {
            let mut d = SseDecoder::new();
            d.feed(&stream[..cut]).unwrap();
            let want = if cut < first_blank {
                None
            } else if cut < second_blank {
                Some("1")
            } else if cut < stream.len() {
                Some("2")
            } else {
                None
            };
            assert_eq!(d.last_event_id(), want, "cut at {cut}");
        }
    }

    #[test]
    fn event_type_resets_after_each_dispatch() {
        assert_eq!(
            all(b"event: progress\ndata: a\n\ndata: b\n\n"),
            vec![ev("progress", "a", None), ev("message", "b", None)]
        );
    }

    #[test]
    fn unterminated_event_is_not_dispatched() {
        assert_eq!(all(b"data: never finished\n"), vec![]);
        assert_eq!(all(b"data: no newline"), vec![]);
    }

    #[test]
    fn leading_bom_is_dropped_even_when_split() {
        let input = b"\xEF\xBB\xBFdata: x\n\n";
        split_everywhere(input, &[ev("message", "x", None)]);
        // A BOM later in the stream is part of the field name: ignored line.
        assert_eq!(all(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n").len(), 1);
    }

    #[test]
    fn id_with_nul_is_ignored() {
        assert_eq!(
            all(b"id: a\0b\ndata: x\n\n"),
            vec![ev("message", "x", None)]
        );
    }

    #[test]
    fn oversized_event_is_an_error() {
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.feed(b"data: 0123456789\n\n").unwrap().len(), 1);
        // Accumulated data across lines counts.
        assert_eq!(d.feed(b"data: 01234567\n"), Ok(vec![]));
        assert_eq!(d.feed(b"data: 89"), Err(SseError::EventTooLarge(16)));
        // A single long line without a line end counts as it arrives.
        let mut d = SseDecoder::with_limit(16);
        assert_eq!(d.feed(&[b'x'; 17]), Err(SseError::EventTooLarge(16)));
        assert_eq!(
            SseError::EventTooLarge(16).to_string(),
            "SSE event larger than 16 bytes"
        );
    }

    #[test]
    fn many_small_events_stay_within_the_limit() {
        let mut d = SseDecoder::with_limit(32);
        let mut n = 0;
        for _ in 0..1000 {
            n += d.feed(b"data: 0123456789012345\n\n").unwrap().len();
        }
        assert_eq!(n, 1000);
    }
}
