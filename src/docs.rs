//! The agent documents compiled into the binary: served over plain HTTP at
//! their own paths and as MCP resources under `--public-url`.
//!
//! Each file in `docs/` may contain `{{PUBLIC_URL}}` (the configured public
//! base URL, no trailing slash) and `{{VERSION}}` (the crate version); both
//! are filled once, on first use.

use crate::mcp::Resource;

/// One embedded document.
pub struct Doc {
    /// The HTTP path it is served at (also the resource URI's path).
    pub path: &'static str,
    /// Resource name.
    pub name: &'static str,
    /// Human title.
    pub title: &'static str,
    /// What it holds.
    pub description: &'static str,
    /// MIME type (with charset for text types).
    pub mime_type: &'static str,
    /// The template text.
    pub template: &'static str,
}

/// The embedded documents, in `resources/list` order.
pub const DOCS: &[Doc] = &[
    Doc {
        path: "/llms.txt",
        name: "llms.txt",
        title: "xmd for agents (short)",
        description: "What this server offers, its eight tools and how to connect, in the llms.txt format.",
        mime_type: "text/plain; charset=utf-8",
        template: include_str!("../docs/llms.txt"),
    },
    Doc {
        path: "/llms-full.txt",
        name: "llms-full.txt",
        title: "xmd for agents (full)",
        description: "The full service contract: every tool, argument, paging rule, error and protocol detail.",
        mime_type: "text/plain; charset=utf-8",
        template: include_str!("../docs/llms-full.txt"),
    },
    Doc {
        path: "/openapi.json",
        name: "openapi.json",
        title: "xmd HTTP routes (OpenAPI 3.1)",
        description: "OpenAPI 3.1 description of this server's own HTTP routes.",
        mime_type: "application/json",
        // docs/openapi.json without its indentation (build.rs): the same
        // JSON value, 38 KB less in the binary.
        template: include_str!(concat!(env!("OUT_DIR"), "/openapi.min.json")),
    },
    Doc {
        path: "/index.md",
        name: "index.md",
        title: "xmd documentation index",
        description: "The documentation index in Markdown, with links to every other document.",
        mime_type: "text/markdown; charset=utf-8",
        template: include_str!("../docs/index.md"),
    },
];

/// Fills a template's placeholders.
pub fn render(template: &str, public_url: &str) -> String {
    template
        .replace("{{PUBLIC_URL}}", public_url)
        .replace("{{VERSION}}", env!("CARGO_PKG_VERSION"))
}

/// The resource list for MCP: every document plus the server card.
pub fn resources(public_url: &str, server_card: &str) -> Vec<Resource> {
    let mut out: Vec<Resource> = DOCS
        .iter()
        .map(|d| Resource {
            uri: format!("{public_url}{}", d.path),
            name: d.name.to_string(),
            title: d.title.to_string(),
            description: d.description.to_string(),
            mime_type: d
                .mime_type
                .split(';')
                .next()
                .unwrap_or(d.mime_type)
                .to_string(),
            text: render(d.template, public_url),
        })
        .collect();
    out.push(Resource {
        uri: format!("{public_url}/mcp/server-card"),
        name: "server-card.json".to_string(),
        title: "MCP server card".to_string(),
        description:
            "This server's MCP server card: identity, endpoint, transport, protocol revisions."
                .to_string(),
        mime_type: "application/mcp-server-card+json".to_string(),
        text: server_card.to_string(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::DOCS;

    /// The served openapi.json is docs/openapi.json minified by build.rs: the
    /// same JSON value (serde_json as the oracle), placeholders intact, and
    /// under 70 % of the source's bytes.
    #[test]
    fn served_openapi_is_the_repository_document_minified() {
        let served = DOCS.iter().find(|d| d.path == "/openapi.json").unwrap();
        let source = include_str!("../docs/openapi.json");
        let a: serde_json::Value = serde_json::from_str(served.template).unwrap();
        let b: serde_json::Value = serde_json::from_str(source).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            served.template.matches("{{PUBLIC_URL}}").count(),
            source.matches("{{PUBLIC_URL}}").count()
        );
        assert!(served.template.len() < source.len() * 7 / 10);
    }
}
