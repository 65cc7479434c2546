//! A scripted FxTwitter imitation on 127.0.0.1: a real threaded HTTP/1.1
//! server (keep-alive, Content-Length framing) that answers by exact
//! path+query, records every request, and supports per-route status,
//! headers, delays and a sequence of answers (the last one repeats).
//! Unscripted targets get `404 {"code":404,"message":"Not found"}`.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Extra headers (Content-Length is always added).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
    /// Wait before writing the answer.
    pub delay: Duration,
}

/// The directory of the recorded upstream bodies.
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fxtwitter")
}

/// A fixture body by file name.
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixture_dir().join(name))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

impl Answer {
    /// A body with an explicit Content-Type.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// A JSON body (`Content-Type: application/json`).
    pub fn json(status: u16, body: &str) -> Answer {
        Answer::raw(status, "application/json", body.as_bytes().to_vec())
    }

    /// A fixture file as a JSON body.
    pub fn fixture(status: u16, name: &str) -> Answer {
        Answer::json(status, &fixture(name))
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Answer {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Delays the answer.
    pub fn delay(mut self, d: Duration) -> Answer {
        self.delay = d;
        self
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Request method.
    pub method: String,
    /// Request target (path and query).
    pub target: String,
    /// Header lines, names as sent.
    pub headers: Vec<(String, String)>,
}

impl Recorded {
    /// A header value by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A computed answer for targets without a scripted route.
pub type Handler = Arc<dyn Fn(&str) -> Option<Answer> + Send + Sync>;

#[derive(Default)]
struct State {
    routes: HashMap<String, VecDeque<Answer>>,
    handler: Option<Handler>,
    requests: Vec<Recorded>,
}

/// The running fake; stops accepting when dropped.
pub struct FakeUpstream {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
}

impl FakeUpstream {
    /// Starts the server on `127.0.0.1:0`.
    pub fn start() -> FakeUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                thread::spawn(move || serve(conn, st));
            }
        });
        FakeUpstream { addr, state, stop }
    }

    /// `http://127.0.0.1:<port>` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Scripts a sequence of answers for an exact target; the last repeats.
    pub fn route(&self, target: &str, answers: Vec<Answer>) -> &FakeUpstream {
        assert!(!answers.is_empty());
        self.state
            .lock()
            .unwrap()
            .routes
            .insert(target.to_string(), answers.into());
        self
    }

    /// Scripts one answer for an exact target.
    pub fn on(&self, target: &str, answer: Answer) -> &FakeUpstream {
        self.route(target, vec![answer])
    }

    /// Answers targets that have no scripted route with `f` (when it
    /// returns `Some`).
    pub fn handler(&self, f: impl Fn(&str) -> Option<Answer> + Send + Sync + 'static) {
        self.state.lock().unwrap().handler = Some(Arc::new(f));
    }

    /// Requests whose target starts with `prefix`.
    pub fn count_prefix(&self, prefix: &str) -> usize {
        self.targets()
            .iter()
            .filter(|t| t.starts_with(prefix))
            .count()
    }

    /// Every request so far, in arrival order.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The targets requested so far, in order.
    pub fn targets(&self) -> Vec<String> {
        self.recorded().into_iter().map(|r| r.target).collect()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.state.lock().unwrap().requests.len()
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn next_answer(state: &Mutex<State>, target: &str) -> Answer {
    let handler = {
        let mut st = state.lock().unwrap();
        match st.routes.get_mut(target) {
            Some(q) if q.len() > 1 => return q.pop_front().unwrap(),
            Some(q) => return q.front().cloned().unwrap(),
            None => st.handler.clone(),
        }
    };
    handler
        .and_then(|h| h(target))
        .unwrap_or_else(|| Answer::json(404, r#"{"code":404,"message":"Not found"}"#))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn serve(conn: TcpStream, state: Arc<Mutex<State>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut writer = match conn.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut parts = line.split_whitespace();
        let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
            return;
        };
        let (method, target) = (method.to_string(), target.to_string());
        let mut headers = Vec::new();
        let mut close = false;
        loop {
            let mut h = String::new();
            match reader.read_line(&mut h) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let h = h.trim_end_matches(['\r', '\n']);
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("connection") && v.trim().eq_ignore_ascii_case("close") {
                    close = true;
                }
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let answer = next_answer(&state, &target);
        state.lock().unwrap().requests.push(Recorded {
            method,
            target,
            headers,
        });
        if !answer.delay.is_zero() {
            thread::sleep(answer.delay);
        }
        let mut out = format!("HTTP/1.1 {} {}\r\n", answer.status, reason(answer.status));
        for (k, v) in &answer.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str(&format!("Content-Length: {}\r\n\r\n", answer.body.len()));
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&answer.body);
        if writer
            .write_all(&bytes)
            .and_then(|_| writer.flush())
            .is_err()
            || close
        {
            return;
        }
    }
}
