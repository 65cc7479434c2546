//! HTTP/1.1 message types, parsing and encoding (hand-written over httparse).
