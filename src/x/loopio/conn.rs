//! One upstream connection on an event loop: a non-blocking `mio`
//! socket, with rustls's buffered `ClientConnection` over it for
//! `https`. It moves plaintext: what to send ([`UpConn::send`]) and what
//! came in ([`UpConn::take_input`]); the exchange itself is
//! [`super::wire`]'s.
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
    /// Plaintext received, not yet taken.
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

    /// Takes the plaintext received so far.
    pub fn take_input(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.input)
    }

    /// Puts back plaintext not used yet (in front of anything newer).
    pub fn unread(&mut self, mut rest: Vec<u8>) {
        if rest.is_empty() {
            return;
        }
        rest.append(&mut self.input);
        self.input = rest;
    }

    /// Bytes of received plaintext waiting.
    pub fn pending(&self) -> usize {
        self.input.len()
    }

    /// Whether received plaintext is waiting.
    pub fn has_input(&self) -> bool {
        !self.input.is_empty()
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

    /// Reads until the socket would block (or the peer closed), through
    /// `scratch` (the loop's read buffer); the plaintext is kept for
    /// [`UpConn::take_input`].
    ///
    /// # Errors
    /// The socket's or the TLS layer's.
    pub fn fill(&mut self, scratch: &mut [u8]) -> Result<(), ConnError> {
        self.fill_upto(scratch, usize::MAX).map(|_| ())
    }

    /// [`UpConn::fill`], stopping once `limit` bytes of plaintext wait
    /// (the socket may then hold more: the caller reads again, as no new
    /// readiness event comes for it); true when it stopped so.
    ///
    /// # Errors
    /// The socket's or the TLS layer's.
    pub fn fill_upto(&mut self, scratch: &mut [u8], limit: usize) -> Result<bool, ConnError> {
        if !self.check_connected()? {
            return Ok(false);
        }
        #[cfg(feature = "tls")]
        if self.tls.is_some() {
            return self.fill_tls(limit);
        }
        loop {
            if self.input.len() >= limit {
                return Ok(true);
            }
            match self.stream.read(scratch) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => self.input.extend_from_slice(&scratch[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    #[cfg(feature = "tls")]
    fn fill_tls(&mut self, limit: usize) -> Result<bool, ConnError> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(false);
        };
        let mut stopped = false;
        loop {
            if self.input.len() >= limit {
                stopped = true;
                break;
            }
            match tls.read_tls(&mut self.stream) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
            let state = tls
                .process_new_packets()
                .map_err(|e| ConnError::Tls(e.to_string()))?;
            if state.plaintext_bytes_to_read() > 0 {
                let start = self.input.len();
                self.input
                    .resize(start + state.plaintext_bytes_to_read(), 0);
                let n = tls.reader().read(&mut self.input[start..]).unwrap_or(0);
                self.input.truncate(start + n);
            }
            if state.peer_has_closed() {
                self.eof = true;
            }
        }
        if self.eof {
            // Whatever came with the close.
            let state = tls
                .process_new_packets()
                .map_err(|e| ConnError::Tls(e.to_string()))?;
            if state.plaintext_bytes_to_read() > 0 {
                let start = self.input.len();
                self.input
                    .resize(start + state.plaintext_bytes_to_read(), 0);
                let n = tls.reader().read(&mut self.input[start..]).unwrap_or(0);
                self.input.truncate(start + n);
            }
        }
        // The handshake or a key update may want to answer.
        self.flush().map(|()| stopped)
    }
}

/// The TLS client settings a connection uses.
#[cfg(feature = "tls")]
pub type TlsConfig = std::sync::Arc<rustls::ClientConfig>;
/// No TLS in this build.
#[cfg(not(feature = "tls"))]
pub type TlsConfig = ();
