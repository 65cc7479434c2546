//! In-process fake FxTwitter upstreams over the recorded fixtures.

use std::sync::Arc;

use crate::x::upstream::{FetchError, Upstream, UpstreamResponse};

/// `GET /2/status/<id>` answer (a plain post with an author).
pub const STATUS: &str = include_str!("../../tests/fixtures/fxtwitter/status-plain.json");
/// A post with media and a quote.
pub const STATUS_MEDIA_QUOTE: &str =
    include_str!("../../tests/fixtures/fxtwitter/status-media-quote.json");
/// `GET /2/thread/<id>` answer of a self-thread.
pub const THREAD_SELF: &str = include_str!("../../tests/fixtures/fxtwitter/thread-self.json");
/// `GET /2/thread/<id>` answer for a reply.
pub const THREAD_REPLY: &str = include_str!("../../tests/fixtures/fxtwitter/thread-reply.json");
/// `GET /2/conversation/<id>` answer.
pub const CONVERSATION: &str =
    include_str!("../../tests/fixtures/fxtwitter/conversation-reply.json");

/// The fixtures a render input may start from, by index.
pub const POST_FIXTURES: [&str; 5] = [
    STATUS,
    STATUS_MEDIA_QUOTE,
    THREAD_SELF,
    THREAD_REPLY,
    CONVERSATION,
];

/// Answers by path prefix: `/2/status/`, `/2/thread/`, `/2/conversation/`;
/// anything else is a 404 in FxTwitter's shape.
pub struct Routes {
    /// Body of `/2/status/…`.
    pub status: Arc<[u8]>,
    /// Body of `/2/thread/…`.
    pub thread: Arc<[u8]>,
    /// Body of `/2/conversation/…`.
    pub conversation: Arc<[u8]>,
    /// HTTP status of every answer.
    pub http_status: u16,
}

impl Routes {
    /// The recorded fixtures, status 200.
    pub fn fixtures() -> Routes {
        Routes::same(200, STATUS.as_bytes())
            .with_thread(THREAD_SELF.as_bytes())
            .with_conversation(CONVERSATION.as_bytes())
    }

    /// One body for every route.
    pub fn same(http_status: u16, body: &[u8]) -> Routes {
        let body: Arc<[u8]> = Arc::from(body);
        Routes {
            status: Arc::clone(&body),
            thread: Arc::clone(&body),
            conversation: body,
            http_status,
        }
    }

    /// Replaces the thread body.
    pub fn with_thread(mut self, body: &[u8]) -> Routes {
        self.thread = Arc::from(body);
        self
    }

    /// Replaces the conversation body.
    pub fn with_conversation(mut self, body: &[u8]) -> Routes {
        self.conversation = Arc::from(body);
        self
    }
}

impl Upstream for Routes {
    fn get(&self, path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        let (status, body) = if path_and_query.starts_with("/2/status/") {
            (self.http_status, self.status.to_vec())
        } else if path_and_query.starts_with("/2/thread/") {
            (self.http_status, self.thread.to_vec())
        } else if path_and_query.starts_with("/2/conversation/") {
            (self.http_status, self.conversation.to_vec())
        } else {
            (404, br#"{"code":404,"message":"NOT_FOUND"}"#.to_vec())
        };
        Ok(UpstreamResponse {
            status,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: body.into(),
        })
    }
}

/// An upstream that never answers (connection refused).
pub struct Down;

impl Upstream for Down {
    fn get(&self, _path_and_query: &str) -> Result<UpstreamResponse, FetchError> {
        Err(FetchError::Connect("connection refused (fuzz fake)".into()))
    }
}
