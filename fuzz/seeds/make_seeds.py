#!/usr/bin/env python3
"""Regenerates fuzz/seeds/<target>/ from the inputs of the unit, dispatch
and wire tests, encoded in each target's input format (see fuzz/README.md).
Run from anywhere: python3 fuzz/seeds/make_seeds.py"""
import json, os, pathlib, shutil

HERE = pathlib.Path(__file__).resolve().parent
FIX = HERE.parent.parent / "tests" / "fixtures" / "fxtwitter"

def write(target, name, data):
    d = HERE / target
    d.mkdir(exist_ok=True)
    (d / name).write_bytes(data)

for t in ["http_conn", "header_b64", "mcp_dispatch", "chunked", "render", "syndication", "expand"]:
    shutil.rmtree(HERE / t, ignore_errors=True)

# http_conn: flags, budget, limits(head/headers), limits(body), repeat, splits..., data
H = b"Host: h\r\n"
PIPELINE = (b"POST /a HTTP/1.1\r\n" + H + b"Content-Length: 5\r\n\r\nhello"
            b"GET /slow HTTP/1.1\r\n" + H + b"\r\n"
            b"POST /c HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
SMUGGLE = [
    b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    b"Content-Length: 0x5\r\n\r\nhello",
    b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    b"Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
    b"Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n",
    b"X-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
    b"X-Space : a\r\nContent-Length: 0\r\n\r\n",
    b"X-Cr: a\rb\r\nContent-Length: 0\r\n\r\n",
    b"X-Nul: a\0b\r\nContent-Length: 0\r\n\r\n",
]
http = {
    "pipeline_whole": bytes([0, 0, 0, 0, 0]) + PIPELINE,
    "pipeline_split": bytes([0x32, 0, 0, 0, 0, 20, 40, 7]) + PIPELINE,
    "pipeline_bytewise_deferred": bytes([0xF2, 0, 0, 0, 0]) + PIPELINE,
    "pipeline_slow_reader": bytes([0x10, 1, 0, 0, 3, 9]) + PIPELINE,
    "short_body": bytes([0x10, 0, 0, 0, 0, 30]) + b"POST /a HTTP/1.1\r\n" + H + b"Content-Length: 3\r\n\r\n{\"a\":1}GET / HTTP/1.1\r\n\r\n",
    "body_too_large": bytes([0, 0, 0, 4, 0]) + b"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n",
    "chunk_too_large": bytes([0, 0, 0, 3, 0]) + b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n",
    "head_too_large": bytes([0x20, 0, 2, 0, 0, 10, 10]) + b"GET / HTTP/1.1\r\nX: " + b"a" * 80 + b"\r\n\r\n",
    "too_many_headers": bytes([0, 0, 6 + 1, 0, 0]) + b"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n",
    "expect_continue": bytes([0x10, 0, 0, 0, 0, 72]) + b"POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
    "expect_bad": bytes([0, 0, 0, 0, 0]) + b"POST /e HTTP/1.1\r\nExpect: nope\r\nContent-Length: 2\r\n\r\n{}",
    "http10": bytes([0, 0, 0, 0, 0]) + b"GET /x HTTP/1.0\r\n\r\nGET /y HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "half_close_slow": bytes([0x03, 0, 0, 0, 0]) + b"GET /slow HTTP/1.1\r\n" + H + b"\r\n",
    "close_then_more": bytes([0, 0, 0, 0, 1]) + b"GET /close HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
    "head_method": bytes([0, 0, 0, 0, 2]) + b"HEAD / HTTP/1.1\r\n\r\n",
    "truncated_eof": bytes([0x11, 0, 0, 0, 0, 5]) + b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
}
for i, s in enumerate(SMUGGLE):
    http[f"smuggle_{i:02}"] = bytes([0x10, 0, 0, 0, 0, 60]) + b"POST /mcp HTTP/1.1\r\n" + H + s + b"GET /after HTTP/1.1\r\n" + H + b"\r\n"
for k, v in http.items():
    write("http_conn", k, v)

# header_b64: the raw header value
b64 = ["=?base64?bcOpdMOpbw==?=", "=?base64?ZmlsZTovLy9kb25uw6llcy/DqS50eHQ=?=",
       "=?base64?SGVsbG8sIOS4lueVjA==?=", "=?base64?IHBhZGRlZCA=?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
       "=?base64?SGVsbG8?=", "=?base64?SGVsbG8==?=", "=?base64?_-8=?=", "=?BASE64?eF9tZF9nZXRfcHJvZmlsZQ==?=",
       "=?base64?=", "=?base64??=", "  get_weather  ", " =?base64?eF9tZF9nZXRfcHJvZmlsZQ==?= ", "=?base64?/w==?="]
for i, s in enumerate(b64):
    write("header_b64", f"value_{i:02}", s.encode())
write("header_b64", "latin1", b"caf\xe9")

# mcp_dispatch: flags (bit0 version, bit1 method, bit2 name, bit7 dead upstream),
# per present header a length byte (>= 0xF0 picks a known value) + bytes, then body
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {}}
K = {"2026-07-28": 0xF0, "2025-11-25": 0xF1, "2025-06-18": 0xF2, "2025-03-26": 0xF3,
     "tools/call": 0xF4, "tools/list": 0xF5, "initialize": 0xF6, "ping": 0xF7,
     "resources/read": 0xF8, "resources/list": 0xF9, "x_md_get_post": 0xFB}
def mcp(name, body, version=None, method=None, tool=None, dead=False):
    flags, head = 0, b""
    for bit, v in enumerate([version, method, tool]):
        if v is not None:
            flags |= 1 << bit
            head += bytes([K[v]])
    if dead:
        flags |= 0x80
    write("mcp_dispatch", name, bytes([flags]) + head + (body if isinstance(body, bytes) else json.dumps(body).encode()))
POST_ARGS = {"url": "https://x.com/demo_author/status/2087208847298015232", "thread": "off"}
mcp("modern_list", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}, "2026-07-28", "tools/list")
mcp("modern_call", {"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": POST_ARGS, "_meta": META}}, "2026-07-28", "tools/call", "x_md_get_post")
mcp("modern_call_dead", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": POST_ARGS, "_meta": META}}, "2026-07-28", "tools/call", "x_md_get_post", dead=True)
mcp("modern_thread_call", {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": {"url": "https://x.com/demo_author/status/2086014813833539585"}, "_meta": META}}, "2026-07-28", "tools/call", "x_md_get_post")
mcp("modern_read", {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "http://127.0.0.1:8080/llms.txt", "_meta": META}}, "2026-07-28", "resources/read")
mcp("modern_unknown_method", {"jsonrpc": "2.0", "id": 3, "method": "nope", "params": {"_meta": META}}, "2026-07-28")
mcp("legacy_initialize", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
mcp("legacy_list", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "2025-06-18")
mcp("legacy_call", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x_md_get_post", "arguments": POST_ARGS}}, "2025-03-26")
mcp("legacy_ping", {"jsonrpc": "2.0", "id": "p", "method": "ping"}, "2025-11-25")
mcp("notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}, "2025-11-25")
mcp("response", {"jsonrpc": "2.0", "id": 5, "result": {}}, "2025-11-25")
mcp("batch", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
mcp("parse_error", b'{"jsonrpc":"2.0","id":1,')
mcp("bad_id", {"jsonrpc": "2.0", "id": 1.5, "method": "ping"})
mcp("header_mismatch", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}, "2026-07-28", "ping")

# chunked: cap class, split count, split lengths..., data
ch = {
    "extensions_trailers": bytes([0, 2, 4, 9]) + b"5;name=val\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT",
    "two_chunks": bytes([0, 0]) + b"A\r\n0123456789\r\n1\r\nx\r\n0\r\n\r\n",
    "cap_hit": bytes([4, 1, 3]) + b"4\r\nabcd\r\n5\r\n",
    "size_overflow": bytes([0, 0]) + b"11111111111111111\r\n",
    "bare_lf": bytes([0, 0]) + b"5\nhello\r\n",
    "huge_size": bytes([3, 0]) + b"FFFFFFFFFFFFFFFF\r\n",
    "bad_trailer": bytes([0, 0]) + b"0\r\nX: a\n",
}
for k, v in ch.items():
    write("chunked", k, v)

# render: args byte, mode byte (bit1: mutate fixtures), then the raw body or
# fixture pick, mutation count, 4-byte mutations
for i, (f, a) in enumerate([("status-plain.json", 0x20), ("status-media-quote.json", 0x25),
                             ("thread-self.json", 0x02), ("thread-reply.json", 0x0b),
                             ("conversation-reply.json", 0x43), ("status-404-not-found.json", 0x20)]):
    write("render", f"raw_{f.removesuffix('.json')}", bytes([a, 0]) + (FIX / f).read_bytes())
write("render", "raw_garbage", bytes([0, 0]) + b'{"status": [1, {"text": null}]}')
# each mutation: op, arg, walk bytes (0 stops; else child (b-1) % len)
muts = [
    ("mutate_script_status", 0x20, 0, [[0, 0, 2, 9, 0], [8, 2, 2, 1, 3, 0]]),
    ("mutate_thread_remove", 0x01, 0x04 | 0x20, [[4, 0, 2, 1, 5, 0], [0, 1, 2, 2, 9, 0]]),
    ("mutate_conversation", 0x03, 0x08 | 0x30, [[1, 0, 3, 1, 2, 0], [9, 5, 3, 2, 0]]),
    ("mutate_obsidian_author", 0x19, 0x01 | 0x10, [[8, 6, 2, 1, 0], [5, 20, 2, 3, 0] + list(b"<script>x</script>!!")]),
]
for name, a, pick, ops in muts:
    write("render", name, bytes([a, 2, pick, len(ops)] + [b for op in ops for b in op]))
# syndication: mode byte (bit0: nest a fixture; bits 1-2: format), then the
# raw body, or a fixture pick and a nesting count (quoted_tweet in itself)
SYN = HERE.parent.parent / "tests" / "fixtures" / "syndication"
for i, f in enumerate(["tweet-plain.json", "tweet-photos.json", "tweet-quote.json",
                       "tweet-gif-card.json", "tweet-poll-reply.json", "not-found-tombstone.json"]):
    write("syndication", f"raw_{f.removesuffix('.json')}", bytes([(i % 3) << 1]) + (SYN / f).read_bytes())
write("syndication", "raw_self_containing_urls", bytes([0]) + json.dumps({
    "__typename": "Tweet", "id_str": "1", "text": "https://t.co/a " * 4,
    "entities": {"urls": [{"url": "https://t.co/a", "expanded_url": "https://t.co/a/https://t.co/a",
                           "indices": [0, 14]}] * 24}}).encode())
for pick, nesting in [(0, 15), (2, 16), (1, 17), (3, 62), (4, 76), (0, 255)]:
    write("syndication", f"nest_{pick}_{nesting}", bytes([1, pick, nesting]))

# expand: text length / 4, text, then per edit kind, start, len, copies
text = "😀 a https://t.co/a b https://t.co/a é &amp; "
tb = text.encode()
tb = tb + b" " * ((-len(tb)) % 4)
head = bytes([len(tb) // 4]) + tb
write("expand", "utf16_offsets", head + bytes([1, 5, 14, 1, 1, 21, 14, 2]))
write("expand", "code_points", head + bytes([2, 4, 14, 1, 2, 20, 14, 1]))
write("expand", "self_containing_24", head + bytes([4, 4, 14, 3] * 24))
write("expand", "overlapping_wild", head + bytes([1, 4, 10, 2, 1, 6, 12, 2, 3, 255, 9, 4, 0, 0, 0, 1]))
print("seeds written")
