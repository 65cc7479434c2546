//! The documents served at fixed paths (server card, AI Catalog,
//! `server.json`, the MCP manifest, the landing page, the embedded
//! documents): their media type, route index and bytes, compiled in or
//! built on the first request and kept.

use std::sync::{Arc, OnceLock};

use super::{landing, statics};
use crate::http::Body;

/// A document served at a fixed path.
pub(super) struct StaticDoc {
    pub(super) content_type: &'static str,
    pub(super) body: DocBody,
    pub(super) route: usize,
}

/// A document's bytes: compiled in, or built on the first request.
pub(super) enum DocBody {
    Static(&'static [u8]),
    Lazy(DocKind, OnceLock<Arc<[u8]>>),
}

/// Which document a lazily built body is.
#[derive(Clone, Copy)]
pub(super) enum DocKind {
    ServerCard,
    AiCatalog,
    ServerJson,
    Manifest,
    Landing,
    Embedded(&'static crate::docs::Doc),
}

impl DocKind {
    fn build(self, public: &str) -> Vec<u8> {
        match self {
            DocKind::ServerCard => server_card_text(public).into_bytes(),
            DocKind::AiCatalog => {
                crate::json::to_string_pretty(&statics::ai_catalog(public)).into_bytes()
            }
            DocKind::ServerJson => crate::json::to_vec(&statics::server_json(public)),
            DocKind::Manifest => {
                crate::json::to_vec(&statics::manifest(public, &statics::server_card(public)))
            }
            DocKind::Landing => landing::page(public).into_bytes(),
            DocKind::Embedded(doc) => crate::docs::render(doc.template, public).into_bytes(),
        }
    }
}

impl StaticDoc {
    pub(super) fn lazy(content_type: &'static str, kind: DocKind, route: usize) -> StaticDoc {
        StaticDoc {
            content_type,
            body: DocBody::Lazy(kind, OnceLock::new()),
            route,
        }
    }

    pub(super) fn body(&self, public: &str) -> Body {
        match &self.body {
            DocBody::Static(bytes) => Body::Static(bytes),
            DocBody::Lazy(kind, slot) => {
                Body::Shared(Arc::clone(slot.get_or_init(|| kind.build(public).into())))
            }
        }
    }
}

/// The server card as served and as the MCP resource: pretty JSON.
pub(super) fn server_card_text(public: &str) -> String {
    crate::json::to_string_pretty(&statics::server_card(public))
}
