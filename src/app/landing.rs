//! The landing page served on `GET /`: what this server is, its MCP URL, the
//! snippet for every client (from [`crate::connect::CLIENTS`]), a `curl`
//! line, the tools (from the registry), and links to the agent documents.
//!
//! Built once at start-up from the configured public URL. Self-contained: no
//! external fonts, scripts, styles or images, and a Content-Security-Policy
//! that forbids loading any. Works with JavaScript off; a small inline script
//! only adds copy buttons. Every inserted value is HTML-escaped, after being
//! escaped for its snippet's own format.

use serde_json::Value;

use crate::app::statics::{DESCRIPTION, SUPPORTED_VERSIONS};
use crate::connect::{self, Format, CLIENTS};
use crate::x::tools::Tools;

/// Media type of the page.
pub const CONTENT_TYPE: &str = "text/html; charset=utf-8";

/// The warning for a public base URL whose host is the unspecified
/// address (`0.0.0.0` or `[::]`): what `xmd serve` prints at start-up and
/// the landing page shows under the MCP URL. That is the default public
/// URL of a server listening on every interface without `--public-url`
/// (the container image's case): it hands out a URL no client can connect
/// to. `None` for any other URL.
pub fn unreachable_public_url(public_url: &str) -> Option<String> {
    let host = crate::app::origin::url_host(public_url)?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ip: std::net::IpAddr = bare.parse().ok()?;
    ip.is_unspecified().then(|| {
        format!(
            "the public URL {} names the unspecified address {host}, which no client can connect to, and the MCP URL, the snippets and every self link carry it. Set --public-url (XMD_PUBLIC_URL) to the URL clients use, e.g. XMD_PUBLIC_URL=https://xmd.example.com",
            public_url.trim_end_matches('/')
        )
    })
}

/// The page for a public base URL (no trailing slash, e.g.
/// `https://x.example.com`); the MCP endpoint is that plus `/mcp`.
pub fn page(public_url: &str) -> String {
    let base = public_url.trim_end_matches('/');
    let url = connect::mcp_url(base);
    let mut out = String::with_capacity(24 * 1024);
    out.push_str(HEAD);
    out.push_str("<main>\n<header>\n<p class=\"eyebrow\">MCP server · Streamable HTTP · read-only</p>\n<h1>xmd <span>X as Markdown</span></h1>\n<p class=\"lede\">");
    out.push_str(&escape(DESCRIPTION));
    out.push_str("</p>\n</header>\n\n<section aria-labelledby=\"endpoint\">\n<h2 id=\"endpoint\">MCP URL</h2>\n");
    out.push_str(&snip("url", "MCP URL", &url, true, Some("mcp-url")));
    if let Some(warning) = unreachable_public_url(base) {
        out.push_str("<p class=\"note\" role=\"alert\" id=\"unreachable\"><strong>Not reachable as shown:</strong> ");
        out.push_str(&escape(&warning));
        out.push_str("</p>\n");
    }
    out.push_str("<p>One URL, no key, no OAuth: point your client at it and the tools below show up. Pick your client.</p>\n</section>\n\n");

    out.push_str("<section aria-labelledby=\"connect\">\n<h2 id=\"connect\">Connect</h2>\n<nav class=\"chips\" aria-label=\"Clients\">");
    for c in &CLIENTS {
        out.push_str(&format!(
            "<a href=\"#{}\">{}</a>",
            escape(c.id),
            escape(c.name)
        ));
    }
    out.push_str("</nav>\n<div class=\"clients\">\n");
    for c in &CLIENTS {
        let lang = match c.format {
            Format::Shell => "shell",
            Format::Toml => "toml",
            Format::Json => "json",
        };
        out.push_str(&format!(
            "<article class=\"client\" id=\"{}\">\n<h3>{}</h3>\n<p class=\"hint\">{}</p>\n",
            escape(c.id),
            escape(c.name),
            code_spans(c.hint)
        ));
        out.push_str(&snip(
            lang,
            c.name,
            &connect::snippet(c, &url),
            c.format == Format::Shell,
            None,
        ));
        out.push_str("</article>\n");
    }
    out.push_str("</div>\n<p class=\"note\">The same snippets come from the command line: <code>xmd connect CLIENT --url URL</code>.</p>\n</section>\n\n");

    out.push_str("<section aria-labelledby=\"try\">\n<h2 id=\"try\">Try it without a client</h2>\n<p>A plain <code>tools/list</code> from the command line, to see what a connected agent sees:</p>\n");
    out.push_str(&snip(
        "shell",
        "curl tools/list",
        &connect::curl_tools_list(&url),
        false,
        None,
    ));
    out.push_str("<p>A client that sends <code>Accept: text/event-stream</code> gets the reply as a single SSE frame; anything else gets <code>application/json</code>.</p>\n</section>\n\n");

    out.push_str(
        "<section aria-labelledby=\"tools\">\n<h2 id=\"tools\">Tools</h2>\n<ul class=\"tools\">\n",
    );
    for (name, title, summary) in tool_lines() {
        out.push_str(&format!(
            "<li><code>{}</code> <strong>{}</strong> <span>{}</span></li>\n",
            escape(&name),
            escape(&title),
            code_spans(&summary)
        ));
    }
    out.push_str("</ul>\n<p>Every tool is read-only: none of them post, reply, like, follow, or read protected accounts, direct messages or Lists.</p>\n</section>\n\n");

    out.push_str("<section aria-labelledby=\"docs\">\n<h2 id=\"docs\">For agents</h2>\n<ul class=\"docs\">\n");
    for (path, what) in [
        (
            "/llms.txt",
            "what this server offers and how to connect, in brief",
        ),
        (
            "/llms-full.txt",
            "the full contract: every argument, limit and error",
        ),
        (
            "/openapi.json",
            "OpenAPI 3.1 description of the HTTP routes",
        ),
        ("/mcp/server-card", "the MCP server card"),
        (
            "/.well-known/ai-catalog.json",
            "the AI Catalog that points to the card",
        ),
    ] {
        let href = format!("{base}{path}");
        out.push_str(&format!(
            "<li><a href=\"{}\">{}</a> <span>{}</span></li>\n",
            escape(&href),
            escape(path),
            escape(what)
        ));
    }
    out.push_str("</ul>\n</section>\n\n<footer>\n<p>xmd ");
    out.push_str(&escape(env!("CARGO_PKG_VERSION")));
    out.push_str(" · MCP revisions ");
    out.push_str(&escape(&SUPPORTED_VERSIONS.join(", ")));
    out.push_str("</p>\n</footer>\n</main>\n");
    out.push_str(SCRIPT);
    out.push_str("</body>\n</html>\n");
    out
}

/// One code block: a bar naming its language, then the text. A one-line
/// block (`wrap`) wraps on narrow screens; a laid-out one scrolls sideways.
/// The copy button is added to the bar by the script.
fn snip(lang: &str, label: &str, text: &str, wrap: bool, code_id: Option<&str>) -> String {
    let id = code_id.map_or(String::new(), |i| format!(" id=\"{}\"", escape(i)));
    format!(
        "<div class=\"snip{}\" data-label=\"{}\"><div class=\"bar\"><span>{}</span></div><pre><code{id}>{}</code></pre></div>\n",
        if wrap { " wrap" } else { "" },
        escape(label),
        escape(lang),
        escape(text)
    )
}

/// `(name, title, first sentence of the description)` for each tool.
fn tool_lines() -> Vec<(String, String, String)> {
    let Value::Array(tools) = Tools::definitions() else {
        return Vec::new();
    };
    tools
        .iter()
        .map(|t| {
            let text = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let description = text("description");
            let first = match description.find(". ") {
                Some(i) => description[..=i].to_string(),
                None => description,
            };
            (text("name"), text("title"), first)
        })
        .collect()
}

/// HTML-escapes text and turns `` `code` `` spans into `<code>` elements.
fn code_spans(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{}</code>", escape(part)));
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const HEAD: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<title>xmd · X as Markdown over MCP</title>
<style>
:root{--bg:#fafaf8;--fg:#1b1c1f;--muted:#5d6068;--line:#e2e2de;--card:#fff;--code:#f3f3f0;--accent:#1d5fd6;--chip:#eef2fb}
@media (prefers-color-scheme:dark){:root{--bg:#111214;--fg:#e8e8e6;--muted:#a0a3ab;--line:#2b2d31;--card:#18191c;--code:#1f2024;--accent:#7aa7ff;--chip:#1c2333}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:70rem;margin:0 auto;padding:2.5rem 1.25rem 3rem}
header{margin-bottom:2rem}
.eyebrow{margin:0 0 .4rem;color:var(--muted);font-size:.85rem;letter-spacing:.02em}
h1{margin:0;font-size:2.4rem;line-height:1.1;letter-spacing:-.02em}
h1 span{font-weight:400;color:var(--muted)}
.lede{max-width:44rem;margin:.75rem 0 0;font-size:1.1rem}
section{margin-top:2.5rem}
h2{margin:0 0 .75rem;font-size:1.3rem;letter-spacing:-.01em}
h3{margin:0;font-size:1rem}
p{margin:.6rem 0}
a{color:var(--accent)}
code,pre{font-family:ui-monospace,"SF Mono",Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace;font-size:.86rem}
p code,li code{background:var(--code);border-radius:4px;padding:.05rem .3rem}
.snip{border:1px solid var(--line);border-radius:8px;background:var(--code);overflow:hidden;margin:.5rem 0}
.bar{display:flex;justify-content:space-between;align-items:center;min-height:2rem;padding:0 .4rem 0 .75rem;border-bottom:1px solid var(--line);color:var(--muted);font-size:.75rem;text-transform:uppercase;letter-spacing:.06em}
pre{margin:0;padding:.75rem;overflow-x:auto;line-height:1.45}
.snip.wrap pre{white-space:pre-wrap;overflow-wrap:anywhere}
#mcp-url{font-size:1.05rem;font-weight:600}
.copy{font:inherit;font-size:.75rem;text-transform:none;letter-spacing:0;color:var(--fg);background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.15rem .6rem;cursor:pointer}
.copy:hover{border-color:var(--accent)}
.copy:focus-visible{outline:2px solid var(--accent);outline-offset:1px}
.chips{display:flex;flex-wrap:wrap;gap:.4rem;margin:0 0 1rem}
.chips a{text-decoration:none;font-size:.85rem;padding:.2rem .65rem;border-radius:999px;background:var(--chip);color:var(--accent)}
.chips a:hover{text-decoration:underline}
.clients{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,26rem),1fr));gap:1rem;align-items:start}
.client{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;scroll-margin-top:1rem}
.client:target{border-color:var(--accent);box-shadow:0 0 0 1px var(--accent)}
.hint{margin:.2rem 0 .6rem;color:var(--muted);font-size:.9rem}
.note{color:var(--muted);font-size:.9rem}
ul.tools,ul.docs{list-style:none;padding:0;margin:0}
ul.tools li,ul.docs li{padding:.55rem 0;border-bottom:1px solid var(--line)}
ul.tools li:last-child,ul.docs li:last-child{border-bottom:0}
ul.tools strong{margin:0 .3rem}
ul.tools span,ul.docs span{color:var(--muted)}
footer{margin-top:3rem;padding-top:1rem;border-top:1px solid var(--line);color:var(--muted);font-size:.85rem}
@media (max-width:40rem){main{padding:1.5rem 1rem 2rem}h1{font-size:1.9rem}.lede{font-size:1rem}ul.tools strong{display:block;margin:.2rem 0 0}.clients{gap:1.75rem}.client{background:none;border:0;border-radius:0;padding:0}.client:target{box-shadow:none}pre{padding:.6rem}code,pre{font-size:.8rem}#mcp-url{font-size:.95rem}}
</style>
</head>
<body>
"#;

const SCRIPT: &str = r#"<script>
(function () {
  function select(code) {
    var range = document.createRange();
    range.selectNodeContents(code);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    try { return document.execCommand("copy"); } catch (e) { return false; }
  }
  document.querySelectorAll(".snip").forEach(function (snip) {
    var code = snip.querySelector("code");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy " + (snip.getAttribute("data-label") || "snippet"));
    function show(ok) {
      button.textContent = ok ? "Copied" : "Selected";
      setTimeout(function () { button.textContent = "Copy"; }, 1600);
    }
    button.addEventListener("click", function () {
      var text = code.textContent;
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { show(true); }, function () { show(select(code)); });
      } else {
        show(select(code));
      }
    });
    snip.querySelector(".bar").appendChild(button);
  });
})();
</script>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(escape(r#"a&b<c>"d'e"#), "a&amp;b&lt;c&gt;&quot;d&#39;e");
        assert_eq!(code_spans("a `<b>` c"), "a <code>&lt;b&gt;</code> c");
    }

    #[test]
    fn every_tool_one_sentence_each() {
        let lines = tool_lines();
        assert_eq!(lines.len(), crate::x::registry::Tool::COUNT);
        assert_eq!(lines[0].0, "x_md_get_post");
        assert_eq!(lines[0].1, "Get X post as Markdown");
        assert_eq!(lines[0].2, "Read one public X (Twitter) post as Markdown, by default with its thread: ancestors, the author's own continuation and up to 10 top direct replies.");
        assert!(lines
            .iter()
            .all(|l| l.2.ends_with('.') && !l.2.contains(". ")));
    }
}
