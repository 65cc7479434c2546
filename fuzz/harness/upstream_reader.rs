//! The event-loop upstream client's response reader
//! (`xmd::x::loopio::wire::ResponseReader`, ureq-proto underneath) under
//! any bytes, split anywhere.

use super::Input;
use crate::x::loopio::wire::{ResponseReader, WireError};

/// What reading a whole input ended with: the status, body and
/// reusability of a response, or the kind of failure.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    Reply(u16, Vec<u8>, bool),
    TooLarge,
    Protocol,
    Incomplete,
}

/// Feeds `data` in pieces ending at `bounds` as the event loop does (bytes
/// a step leaves unused are kept and given again with the next ones),
/// then the end of the connection when `close`; checks each step's
/// accounting on the way.
fn read(data: &[u8], bounds: &[usize], cap: usize, close: bool) -> Ended {
    let mut r = ResponseReader::for_get(cap);
    let mut pending: Vec<u8> = Vec::new();
    let mut start = 0;
    for &end in bounds.iter().chain(std::iter::once(&data.len())) {
        if end < start || end > data.len() {
            continue;
        }
        pending.extend_from_slice(&data[start..end]);
        start = end;
        match r.feed(&pending) {
            Ok(used) => {
                assert!(used <= pending.len(), "used {used} of {}", pending.len());
                pending.drain(..used);
            }
            Err(e) => return failure(e),
        }
        if r.is_done() {
            break;
        }
    }
    if !r.is_done() {
        if !close {
            return Ended::Incomplete;
        }
        if let Err(e) = r.eof() {
            return failure(e);
        }
    }
    let reply = r.finish().expect("a reader that is done gives its reply");
    let body = reply.response.body.to_vec();
    assert!(
        body.len() <= cap,
        "a body of {} over the cap {cap}",
        body.len()
    );
    Ended::Reply(reply.response.status, body, reply.reusable)
}

fn failure(e: WireError) -> Ended {
    match e {
        WireError::TooLarge => Ended::TooLarge,
        WireError::Protocol(_) => Ended::Protocol,
        WireError::Incomplete => Ended::Incomplete,
    }
}

/// Whether two readings agree (see [`check_upstream_reader`]).
fn same(a: &Ended, b: &Ended) -> bool {
    a == b
        || matches!(
            (a, b),
            (Ended::TooLarge, Ended::Protocol) | (Ended::Protocol, Ended::TooLarge)
        )
}

/// Properties: reading never panics; consumes no more than it is given;
/// never returns a body over the cap; and a response reads the same
/// however TCP splits it (status, body and reusability, or the kind of
/// failure), with and without the end of the connection after it. One
/// latitude: a body over the cap that is also malformed just past it may
/// fail either way (ureq-proto reads a chunk and the bytes after it in one
/// call, so a bad CRLF can be met before the cap is counted).
pub fn check_upstream_reader(data: &[u8]) {
    let mut input = Input::new(data);
    let cap = [4 * 1024 * 1024, 0, 1, 7, 100, 4096][usize::from(input.byte() % 6)];
    let close = input.byte() % 2 == 1;
    let splits = usize::from(input.byte() % 16);
    let lens: Vec<usize> = input.take(splits).iter().map(|b| usize::from(*b)).collect();
    let data = input.rest();
    let bounds: Vec<usize> = lens
        .iter()
        .scan(0, |at, n| {
            *at += n;
            Some(*at)
        })
        .collect();
    let whole = read(data, &[], cap, close);
    let split = read(data, &bounds, cap, close);
    assert!(
        same(&whole, &split),
        "whole and split readings differ ({bounds:?}): {whole:?} {split:?}"
    );
    let bytewise: Vec<usize> = (1..data.len().min(512)).collect();
    let one_by_one = read(data, &bytewise, cap, close);
    if data.len() < 512 {
        assert!(
            same(&whole, &one_by_one),
            "whole and byte-by-byte readings differ: {whole:?} {one_by_one:?}"
        );
    }
}
