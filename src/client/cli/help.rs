//! The `xmd client --help` text: every command, option and exit code,
//! with the client's defaults and limits filled in.

use crate::client::{DEFAULT_MAX_LIST_BYTES, DEFAULT_TIMEOUT, DEFAULT_URL};

/// The `xmd client --help` text.
pub fn help() -> String {
    format!(
        "xmd client — talk to any MCP server over Streamable HTTP (both protocol eras)\n\n\
Usage:\n  xmd client [OPTIONS] COMMAND [ARGS]\n\n\
Commands:\n\
\x20 discover                    server/discover (2026-07-28 framing) and print the result\n\
\x20 initialize                  settle the era (probe and/or initialize handshake), print what was negotiated\n\
\x20 ping                        liveness: ping (legacy) or a server/discover round trip (2026-07-28)\n\
\x20 tools                       list every tool (follows nextCursor)\n\
\x20 call NAME [ARGS]            call a tool; ARGS is one JSON object, '-' (JSON from stdin),\n\
\x20                             or key=value and key:=JSON pairs; key=value is typed by the tool's\n\
\x20                             inputSchema (integer, number, boolean, array/object as JSON;\n\
\x20                             one tools/list first), key:=JSON is sent as written;\n\
\x20                             no ARGS sends {{}}\n\
\x20 resources                   list every resource (follows nextCursor)\n\
\x20 templates                   list every resource template (follows nextCursor)\n\
\x20 read URI                    read one resource\n\
\x20 rpc METHOD [PARAMS]         any method; PARAMS is a JSON object or '-'; prints the inner result\n\n\
Options (anywhere on the line; '--' ends them):\n\
\x20 --url URL                   MCP endpoint [default: {DEFAULT_URL}]\n\
\x20 --era auto|modern|legacy    auto probes server/discover at 2026-07-28 and falls back to the\n\
\x20                             initialize handshake on a 4xx or JSON-RPC error [default: auto]\n\
\x20 --protocol-version V        pin the revision (no fallback); a date before 2026-07-28 means the\n\
\x20                             handshake era\n\
\x20 --header 'Name: value'      extra request header, repeatable (e.g. Authorization); replaces a\n\
\x20                             header of the same name the client would set\n\
\x20 --timeout SECS              time limit of the whole command: every exchange, redirect, SSE\n\
\x20                             resumption and its wait, new session and page; past it: exit 4\n\
\x20                             [default: {}]\n\
\x20 --max-list-bytes BYTES      most bytes the pages of one list (tools, resources, templates,\n\
\x20                             and the tools/list before a typed call) may hold together; past\n\
\x20                             it: exit 4 naming the page [default: {}]\n\
\x20 --text                      call/read: print only the text content (the Markdown), not JSON\n\
\x20 --raw                       print the server's text and error messages as sent; without it,\n\
\x20                             control characters (C0 but newline and tab, DEL, C1), bidi\n\
\x20                             controls (U+061C, U+200E/F, U+202A-E, U+2066-F) and invisible\n\
\x20                             ones (U+200B, U+2060-4, U+FEFF, U+FFF9-B, U+180E, tags\n\
\x20                             U+E0000-7F) in --text output, on stderr and in --verbose lines\n\
\x20                             are written \\u{{1b}}, and a backslash before 'u{{' as \\u{{5c}}, so\n\
\x20                             no escape sequence or reordered text reaches the terminal (JSON\n\
\x20                             output escapes them as \\u00XX either way)\n\
\x20 -v, --verbose               print each HTTP exchange on stderr (method, headers, status, session)\n\
\x20 -h, --help                  print this help\n\n\
Output: JSON on stdout (a JSON-RPC error prints {{\"error\": …}}); one error line on stderr.\n\
A legacy session (Mcp-Session-Id) is ended with DELETE before exiting (within --timeout); a 404\n\
(or the SDK examples' 400 'No valid session ID provided') to a request with a session starts\n\
one new session and retries once. 307/308 redirects are followed within the same scheme,\n\
host and port, at most {} hops. A server gets at most {} answers to its own requests in\n\
one command (all its pages and exchanges together; later ones go unanswered). A reply\n\
nested deeper than {} levels, or with more than {} JSON values or\n\
{} objects (one reply, or the pages of one list together), is refused before it is\n\
parsed: exit 4.\n\n\
Exit codes:\n\
\x20 0  success\n\
\x20 1  the tool ran and returned isError: true (its result is still printed)\n\
\x20 2  usage error\n\
\x20 3  the server answered with a JSON-RPC error (under any HTTP status: a 4xx whose body is one counts)\n\
\x20 4  transport failure (connect, timeout, TLS), an HTTP error status without a JSON-RPC error, or protocol violation\n\n\
Examples:\n\
\x20 xmd client tools\n\
\x20 xmd client call x_md_get_post url=https://x.com/jack/status/20 --text\n\
\x20 xmd client call x_md_get_post '{{\"url\":\"https://x.com/jack/status/20\",\"thread\":\"off\"}}'\n\
\x20 xmd client call x_md_get_profile handle=jack limit=3 full=true\n\
\x20 xmd client call x_md_get_post url=https://x.com/jack/status/20 max_posts:=5 full:=true\n\
\x20 xmd client --url https://mcp.example.com/mcp --header 'Authorization: Bearer $TOKEN' resources\n",
        DEFAULT_TIMEOUT.as_secs(),
        DEFAULT_MAX_LIST_BYTES,
        crate::client::MAX_REDIRECTS,
        crate::client::MAX_SERVER_REQUESTS_ANSWERED,
        crate::client::MAX_REPLY_DEPTH,
        crate::client::MAX_REPLY_VALUES,
        crate::client::MAX_REPLY_OBJECTS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_documents_every_command_option_and_exit_code() {
        let h = help();
        for needle in [
            "discover",
            "initialize",
            "ping",
            "tools",
            "call NAME",
            "resources",
            "templates",
            "read URI",
            "rpc METHOD",
            "--url",
            "--era",
            "--header",
            "--timeout",
            "--text",
            "--protocol-version",
            "--verbose",
            "--raw",
            "--max-list-bytes",
            "time limit of the whole command",
            "at most 5 hops",
            "one new session and retries once",
            DEFAULT_URL,
            "0  success",
            "1  the tool",
            "2  usage",
            "3  the server answered with a JSON-RPC error",
            "4  transport",
        ] {
            assert!(h.contains(needle), "help lacks {needle:?}");
        }
    }
}
