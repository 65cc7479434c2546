//! One upstream connection on an event loop: a non-blocking `mio`
//! socket, with rustls's buffered `ClientConnection` over it for
//! `https`. It moves plaintext: what to send ([`UpConn::send`]) and what
//! came in ([`UpConn::read_chunk`], and what the exchange left unused,
//! [`UpConn::keep`]); the exchange itself is [`super::wire`]'s.
//!
//! Registered for both readable and writable readiness once (edge
//! triggered), so its interest never changes: a writable edge flushes
//! what is pending, a readable edge reads until the socket would block.

use std::io::{self, Read, Write};
use std::net::SocketAddr;

use mio::net::TcpStream;

/// Bytes read from the socket per `read` call: the size of the loop's
/// read buffer.
pub const READ_BYTES: usize = 16 * 1024;

/// Why a connection failed, classified as the metrics' causes read it.
#[derive(Debug)]
pub enum ConnError {
    /// An I/O error of the socket.
    Io(io::Error),
    /// The TLS layer refused (handshake, certificate, record).
    Tls(String),
}

impl std::fmt::Display for ConnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnError::Io(e) => write!(f, "io: {e}"),
            ConnError::Tls(m) => write!(f, "tls: {m}"),
        }
    }
}

impl From<io::Error> for ConnError {
    fn from(e: io::Error) -> ConnError {
        ConnError::Io(e)
    }
}

/// One upstream connection.
pub struct UpConn {
    /// The socket (registered by the driver).
    pub stream: TcpStream,
    #[cfg(feature = "tls")]
    tls: Option<Box<rustls::ClientConnection>>,
    connected: bool,
    /// Plaintext not yet handed to the socket (or to TLS).
    out: Vec<u8>,
    out_pos: usize,
    /// Plaintext received and not used yet (a head or chunk line not
    /// whole, or a body waiting for room).
    input: Vec<u8>,
    /// The peer closed its side.
    eof: bool,
}

impl UpConn {
    /// Starts connecting to `addr` (non-blocking). With `tls`, the TLS
    /// client for `server_name` runs over it.
    ///
    /// # Errors
    /// When the socket cannot be created, or `server_name` is not one.
    pub fn connect(addr: SocketAddr, tls: Option<(&str, TlsConfig)>) -> Result<UpConn, ConnError> {
        #[cfg(feature = "tls")]
        let tls = match tls {
            Some((name, config)) => {
                let name = rustls::pki_types::ServerName::try_from(name.to_string())
                    .map_err(|e| ConnError::Tls(e.to_string()))?;
                Some(Box::new(
                    rustls::ClientConnection::new(config, name)
                        .map_err(|e| ConnError::Tls(e.to_string()))?,
                ))
            }
            None => None,
        };
        #[cfg(not(feature = "tls"))]
        if tls.is_some() {
            return Err(ConnError::Tls(
                "https is not supported by this build".into(),
            ));
        }
        let stream = TcpStream::connect(addr)?;
        let _ = stream.set_nodelay(true);
        Ok(UpConn {
            stream,
            #[cfg(feature = "tls")]
            tls,
            connected: false,
            out: Vec::new(),
            out_pos: 0,
            input: Vec::new(),
            eof: false,
        })
    }

    /// Queues `bytes` to send (written on [`UpConn::flush`]).
    pub fn send(&mut self, bytes: &[u8]) {
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        self.out.extend_from_slice(bytes);
    }

    /// Whether the TCP connection is established.
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Whether the TLS handshake is still running.
    pub fn is_handshaking(&self) -> bool {
        #[cfg(feature = "tls")]
        if let Some(t) = &self.tls {
            return t.is_handshaking();
        }
        false
    }

    /// Whether the peer closed its side.
    pub fn is_eof(&self) -> bool {
        self.eof
    }

    /// Takes the plaintext kept from earlier reads ([`UpConn::keep`]).
    pub fn take_input(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.input)
    }

    /// Keeps plaintext not used yet, after anything kept before it.
    pub fn keep(&mut self, rest: &[u8]) {
        self.input.extend_from_slice(rest);
    }

    /// Puts back plaintext taken with [`UpConn::take_input`] and not used
    /// yet (in front of anything kept since).
    pub fn unread(&mut self, mut rest: Vec<u8>) {
        if rest.is_empty() {
            return;
        }
        rest.append(&mut self.input);
        self.input = rest;
    }

    /// Whether plaintext is kept from earlier reads.
    pub fn has_input(&self) -> bool {
        !self.input.is_empty()
    }

    /// Whether an idle connection may carry a request: read once, it has
    /// nothing (no byte since its last answer, no close, nothing kept).
    /// Reads into `scratch`; what it reads is dropped with the connection.
    pub fn is_quiet(&mut self, scratch: &mut [u8]) -> bool {
        matches!(self.read_chunk(scratch), Ok(0)) && !self.eof && !self.has_input()
    }

    /// Checks a connect in progress (after a writable or error event).
    fn check_connected(&mut self) -> Result<bool, ConnError> {
        if self.connected {
            return Ok(true);
        }
        if let Some(e) = self.stream.take_error()? {
            return Err(e.into());
        }
        match self.stream.peer_addr() {
            Ok(_) => {
                self.connected = true;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes what is pending, until the socket would block.
    ///
    /// # Errors
    /// The socket's or the TLS layer's.
    pub fn flush(&mut self) -> Result<(), ConnError> {
        if !self.check_connected()? {
            return Ok(());
        }
        #[cfg(feature = "tls")]
        if let Some(tls) = self.tls.as_mut() {
            if self.out_pos < self.out.len() {
                // Buffered by rustls until the handshake is done.
                tls.writer().write_all(&self.out[self.out_pos..])?;
                self.out_pos = self.out.len();
            }
            while tls.wants_write() {
                match tls.write_tls(&mut self.stream) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            }
            return Ok(());
        }
        while self.out_pos < self.out.len() {
            match self.stream.write(&self.out[self.out_pos..]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(n) => self.out_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Reads the next piece of plaintext into `scratch` (the loop's read
    /// buffer), where the caller uses it in place: the bytes of an
    /// answer are copied once, from `scratch` into its body. 0 when
    /// nothing more is there now (the socket would block) or the peer
    /// closed ([`UpConn::is_eof`]).
    ///
    /// # Errors
    /// The socket's or the TLS layer's.
    pub fn read_chunk(&mut self, scratch: &mut [u8]) -> Result<usize, ConnError> {
        if !self.check_connected()? {
            return Ok(0);
        }
        #[cfg(feature = "tls")]
        if self.tls.is_some() {
            // rustls may still hold plaintext after the close.
            return self.read_chunk_tls(scratch);
        }
        if self.eof {
            return Ok(0);
        }
        loop {
            match self.stream.read(scratch) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(0);
                }
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(0),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// [`UpConn::read_chunk`] through TLS: plaintext rustls holds first,
    /// then records from the socket until one gives plaintext.
    #[cfg(feature = "tls")]
    fn read_chunk_tls(&mut self, scratch: &mut [u8]) -> Result<usize, ConnError> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(0);
        };
        loop {
            match tls.reader().read(scratch) {
                Ok(0) => {
                    // The peer's close_notify.
                    self.eof = true;
                    break;
                }
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // A close without close_notify, seen below as the
                // socket's end.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {}
                Err(e) => return Err(e.into()),
            }
            if self.eof {
                break;
            }
            match tls.read_tls(&mut self.stream) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
            tls.process_new_packets()
                .map_err(|e| ConnError::Tls(e.to_string()))?;
        }
        // The handshake or a key update may want to answer.
        self.flush().map(|()| 0)
    }
}

/// The TLS client settings a connection uses.
#[cfg(feature = "tls")]
pub type TlsConfig = std::sync::Arc<rustls::ClientConfig>;
/// No TLS in this build.
#[cfg(not(feature = "tls"))]
pub type TlsConfig = ();

#[cfg(test)]
mod tests {
    use super::UpConn;
    use std::io::Write;
    use std::time::{Duration, Instant};

    /// A connected plain connection and the peer's end.
    fn pair() -> (UpConn, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let conn = UpConn::connect(listener.local_addr().unwrap(), None).unwrap();
        let (peer, _) = listener.accept().unwrap();
        (conn, peer)
    }

    /// Polls `is_quiet` until it says `want` or a second passes (bytes
    /// and a close take a moment to cross the loopback).
    fn settles(conn: &mut UpConn, want: bool) -> bool {
        let mut scratch = vec![0u8; super::READ_BYTES];
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            if conn.is_quiet(&mut scratch) == want {
                return true;
            }
            if Instant::now() > until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The probe before reuse: an idle connection with nothing is
    /// quiet; one the peer wrote to (an answer nobody asked for) or
    /// closed is not, and stays not.
    #[test]
    fn an_idle_connection_is_quiet_until_the_peer_writes_or_closes() {
        let (mut conn, mut peer) = pair();
        assert!(settles(&mut conn, true));
        std::thread::sleep(Duration::from_millis(50));
        assert!(settles(&mut conn, true), "nothing came");
        peer.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap();
        assert!(settles(&mut conn, false), "stray bytes");
        let (mut conn, peer) = pair();
        assert!(settles(&mut conn, true));
        drop(peer);
        assert!(settles(&mut conn, false), "closed");
        assert!(!conn.is_quiet(&mut [0u8; 16]), "still closed");
    }
}
