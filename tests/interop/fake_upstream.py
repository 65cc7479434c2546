#!/usr/bin/env python3
"""A loopback imitation of the FxTwitter v2 API that serves the recorded fixtures.

Routes follow shared/design/upstream.md section 4 (fixture table) and section 1
(transport rules). Query parameters are matched as a set, not as a string, so
the order a client writes them in does not matter; `count` is a page-size hint
upstream and is only range-checked (1-100, else 400 like FxTwitter).

  GET /2/status/2087208847298015232        200 status-plain.json
  GET /2/status/2086794960023072769        200 status-media-quote.json
  GET /2/status/2087208847298015234        200 status-float-timestamp.json (a
        created_timestamp of 17 significant digits, which a reader must round
        correctly: .ci/run's float check)
  GET /2/thread/2086014813833539585        200 thread-self.json
  GET /2/thread/2085826244871471104        200 built from conversation-reply.json
  GET /2/conversation/2085826244871471104  200 conversation-reply.json
        (?ranking_mode=likes or recency; with a cursor: an empty reply page)
  GET /2/thread/1900000000000000000        200 the largest thread: 64 posts of 25,000
        characters each by demo_author (issue 14), built in memory
  GET /2/status|thread/2086600000000000001 401 status-401-private.json
  GET /2/status|thread/2086000000000000500 500 {"status":null,"thread":null,"author":null,
        "code":500}: a post FxTwitter fails to fetch from X (issue 30: the fleet check)
  GET /2/status|thread/20872088472980160NN 200 status-plain.json as post NN (00-99): the
        same post under 100 distinct ids, for checks that need many distinct posts
  GET /2/status|thread/<other digits>      404 status-404-not-found.json
  GET /2/status|thread/<non-digits>        400 id: tweet ID must be a numeric snowflake
  GET /2/status|thread/2086000000000000429 429 error-429-rate-limited.json, Retry-After: 30
  GET /2/status/2087208847298015232/quotes   200 quotes-page1.json, its bottom cursor
        quotes-page2.json, that one's quotes-page3-empty.json (200, results [], both
        cursors set, as X keeps sending cursors past the end)
  GET /2/status/2087208847298015232/reposts  200 reposts-page1.json, page2, page3-empty
        the same way
  GET /2/status/2086000000000000404/quotes|reposts  404 quotes|reposts-404-no-timeline.json
  GET /2/status/2086000000000000500/quotes|reposts  500 quotes|reposts-500-failed.json
  GET /2/status/2086000000000000429/quotes|reposts  429 as for the post
  GET /2/status/<non-digits>/quotes|reposts  400 status-400-bad-id.json
  GET /2/status/<other digits>/quotes        200 empty list (nobody quoted it)
  GET /2/status/<other digits>/reposts       404 reposts-404-no-timeline.json
  GET /2/profile/demo_author               200 profile.json
  GET /2/profile/demo_author/statuses      200 pages 1, 2, 3 (empty) by cursor; another
        cursor whose embedded sortIndex is a known post id continues after that post
  GET /2/profile/demo_author/followers     200 followers-page1.json; its bottom cursor
  GET /2/profile/demo_author/following         gives an empty page
  GET /2/profile/<other>[/...]             404 like FxTwitter for unknown users
  GET /2/search?q=fixture cache&feed=latest  200 search-latest.json; its bottom cursor
        gives an empty page; q=outage gives 404 search-404-outage.json (FxEmbed#2303)
  GET /2/typeahead?q=demo&result_type=users  200 search-users-typeahead.json
  Issue 31 (FxEmbed routes.ts, routes/twitter.ts, providers/twitter/*):
  GET /2/profile/demo_author/statuses?with_replies=<truthy>  200 profile-replies-page1.json,
        its bottom cursor profile-replies-page2-empty.json (its bottom the same: the end)
  GET /2/profile/demo_author/statuses?since=<t>  (no cursor) 204 with no body when no post of
        page 1 is newer than t (seconds, or ms from 1e12 on), else page 1; a `since` that
        JavaScript's Number() does not read as a finite number >= 0 is a 400
  GET /2/profile/demo_author/media         200 profile-media-page1.json, then page2-empty
  GET /2/profile/demo_author/articles      200 profile-articles-page1.json, then page2-empty
  GET /2/profile/demo_author/about         200 profile-about.json
  GET /2/status|thread/2087208847298015300?lang=en  200 status-translated.json (a Japanese
        post and its translation; without lang, or with another lang, no `translation`)
  GET /2/trends?type=trending&count=N      200 trends.json, its first N trends (N 1-50, else
        400; another type 400)
  anything else                            404 {"code":404,"message":"Not found"}

Transport rules copied from FxTwitter: a request without User-Agent gets 401
with an `error` body; a path with a trailing slash is redirected (301) to the
slash-less path. `--rate-limit` makes every /2/ request a 429 with Retry-After.

Test hooks outside /2/: `GET /__fake/requests` returns
{"total": n, "paths": {"/2/...?...": count}, "hosts": {Host: count},
"sni": {server name: count}} (sni: TLS only; "" when none was sent) and
`POST /__fake/reset` clears it.

With --tls-cert and --tls-key the fake speaks HTTPS (for a proxy in front of
it that verifies FxTwitter's certificate and sends its server name).
--delay-ms holds every /2/ answer that long (so concurrent requests overlap).

Usage: fake_upstream.py [--host 127.0.0.1] [--port 0] [--fixtures DIR]
                        [--rate-limit] [--verbose] [--delay-ms N]
                        [--tls-cert PEM --tls-key PEM]
With --port 0 the chosen port is printed alone on the first stdout line. The
server prints nothing else unless --verbose (one line per request, stderr).
"""

import argparse
import base64
import json
import os
import re
import sys
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

HANDLE = "demo_author"
PRIVATE_ID = "2086600000000000001"
RATE_LIMITED_ID = "2086000000000000429"
# The largest thread the fake serves (issue 14): posts of 25,000 characters,
# the longest an X post can be, and 64 of them (the upstream thread cap).
LONG_THREAD_ID = "1900000000000000000"
LONG_THREAD_POSTS = 64
LONG_POST_CHARS = 25000
# Posts whose quote and repost lists fail upstream (upstream.md section 6.1).
NO_TIMELINE_ID = "2086000000000000404"
FAILED_LIST_ID = "2086000000000000500"
# The post FxTwitter answers 500 for (status and thread), same id.
FAILED_POST_ID = FAILED_LIST_ID
# Ids 2087208847298016000-099: status-plain.json under a hundred ids.
MANY_POSTS_PREFIX = "20872088472980160"
RETRY_AFTER = "30"
TRUTHY = {"1", "true", "yes", "on", ""}
TRANSLATED_ID = "2087208847298015300"
# ECMA-262 StringToNumber's white space (WhiteSpace and LineTerminator).
JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
JS_NUMBER = re.compile(r"(?:[+-]?(?:Infinity|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)?")


def js_number(text):
    """JavaScript's Number(text); None for NaN (what FxTwitter's
    z.coerce.number() reads a query parameter with)."""
    t = text.strip(JS_SPACE)
    if not JS_NUMBER.fullmatch(t):
        return None
    if t == "":
        return 0.0
    if t[:2] in ("0x", "0X", "0o", "0O", "0b", "0B"):
        return float(int(t[2:], {"x": 16, "o": 8, "b": 2}[t[1].lower()]))
    try:
        return float(t)
    except OverflowError:
        return float("inf")
NOT_FOUND = {"code": 404, "message": "Not found"}
EMPTY_LIST = {"code": 200, "results": [], "cursor": {"top": None, "bottom": None}}
UNKNOWN_USER_LIST = {"code": 404, "results": [], "cursor": {"top": None, "bottom": None}}
USER_NOT_FOUND = {"code": 404, "message": "User not found"}


class Fixtures:
    """The fixture bodies, loaded once, plus the derived answers."""

    def __init__(self, directory):
        def load(name):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                return json.load(f)

        self.status = {
            "2087208847298015232": load("status-plain.json"),
            "2086794960023072769": load("status-media-quote.json"),
            "2087208847298015234": load("status-float-timestamp.json"),
        }
        conversation = load("conversation-reply.json")
        self.conversation = {"2085826244871471104": conversation}
        self.thread = {
            "2086014813833539585": load("thread-self.json"),
            # upstream.md section 4: the thread call for the focal reply.
            "2085826244871471104": {
                "status": conversation["status"],
                "thread": conversation["thread"],
                "author": conversation["author"],
                "code": 200,
            },
        }
        self.thread[LONG_THREAD_ID] = long_thread()
        self.not_found = load("status-404-not-found.json")
        self.private = load("status-401-private.json")
        self.rate_limited = load("error-429-rate-limited.json")
        self.profile = load("profile.json")
        self.pages = [
            load("profile-statuses-page1.json"),
            load("profile-statuses-page2.json"),
            load("profile-statuses-page3-empty.json"),
        ]
        self.followers = load("followers-page1.json")
        self.search = load("search-latest.json")
        self.search_outage = load("search-404-outage.json")
        self.typeahead = load("search-users-typeahead.json")
        self.bad_id = load("status-400-bad-id.json")
        translated = load("status-translated.json")
        self.translated = translated
        plain_status = {k: v for k, v in translated["status"].items() if k != "translation"}
        self.status[TRANSLATED_ID] = dict(translated, status=plain_status)
        self.timelines = {
            "media": [load("profile-media-page1.json"), load("profile-media-page2-empty.json")],
            "articles": [load("profile-articles-page1.json"), load("profile-articles-page2-empty.json")],
            "replies": [load("profile-replies-page1.json"), load("profile-replies-page2-empty.json")],
        }
        self.about = load("profile-about.json")
        self.trends = load("trends.json")
        self.status_lists = {}
        for which in ("quotes", "reposts"):
            self.status_lists[which] = {
                "pages": [load(f"{which}-page{n}.json") for n in (1, 2)]
                + [load(f"{which}-page3-empty.json")],
                "no_timeline": load(f"{which}-404-no-timeline.json"),
                "failed": load(f"{which}-500-failed.json"),
            }


def long_thread():
    """The 64-post thread of 25,000-character posts (each a reply to the one
    before it), as /2/thread answers it."""
    author = {"id": "1625427172309102593", "screen_name": HANDLE, "name": "Demo Author"}
    rows = []
    for i in range(LONG_THREAD_POSTS):
        pid = str(int(LONG_THREAD_ID) + i)
        head = f"{i + 1:02d}/{LONG_THREAD_POSTS} "
        body = (head + "A long note about caches, quotes \"like this\", and é ✓ 🦀. " * 500)[:LONG_POST_CHARS]
        rows.append({
            "type": "status",
            "id": pid,
            "url": f"https://x.com/{HANDLE}/status/{pid}",
            "text": body,
            "created_at": "Tue Aug 11 16:05:42 +0000 2026",
            "created_timestamp": 1786464342 + i,
            "likes": i, "reposts": 0, "replies": 1,
            "author": author,
            "replying_to": {"screen_name": HANDLE, "status": str(int(pid) - 1)} if i else None,
        })
    return {"code": 200, "status": rows[0], "thread": rows, "author": author}


def renamed_post(body, sid):
    """`body` (a /2/status answer) as the post `sid`."""
    status = dict(body["status"], id=sid, url=f"https://x.com/{HANDLE}/status/{sid}")
    return dict(body, status=status)


def timeline_cursor_sort_index(cursor):
    """The sortIndex (a snowflake as decimal text) inside a profile cursor:
    URL-safe base64 of a Thrift struct, see upstream.md section 1.5."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (ValueError, TypeError):
        return None
    digits = b""
    best = b""
    for byte in raw:
        if 0x30 <= byte <= 0x39:
            digits += bytes([byte])
        else:
            if len(digits) > len(best):
                best = digits
            digits = b""
    if len(digits) > len(best):
        best = digits
    return best.decode() if len(best) >= 15 else None


def forge_cursor(sort_index):
    """A bottom cursor in X's format with the given sortIndex (direction 2)."""
    text = sort_index.encode()
    raw = (
        b"\x0c\x00\x07\n\x00\x01\x1c\xf87FO\xc0\xff\xef\x0b\x00\x02"
        + len(text).to_bytes(4, "big")
        + text
        + b"\x08\x00\x03\x00\x00\x00\x02\x00\x00"
    )
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class Answer:
    """One response: status, JSON body (or None), extra headers."""

    def __init__(self, status, body=None, headers=None):
        self.status = status
        self.body = body
        self.headers = headers or {}


def check_count(query):
    """FxTwitter validates `count` as an integer 1-100."""
    if "count" not in query:
        return None
    value = query.pop("count")
    try:
        n = int(value)
    except ValueError:
        return Answer(400, {"code": 400, "message": "count: Expected number, received nan"})
    if n < 1:
        return Answer(400, {"code": 400, "message": "count: Number must be greater than or equal to 1"})
    if n > 100:
        return Answer(400, {"code": 400, "message": "count: Number must be less than or equal to 100"})
    return None


def route(fx, path, query):
    """Maps a request to an Answer. `query` is a dict (last value wins)."""
    parts = path.strip("/").split("/")
    if len(parts) < 2 or parts[0] != "2":
        return Answer(404, NOT_FOUND)
    kind = parts[1]
    query = dict(query)
    bad_count = check_count(query)

    if kind == "status" and len(parts) == 4 and parts[3] in ("quotes", "reposts"):
        if bad_count:
            return bad_count
        return status_list(fx, parts[2], parts[3], query)

    if kind in ("status", "thread", "conversation") and len(parts) == 3:
        sid = parts[2]
        lang = query.pop("lang", None)
        if sid == TRANSLATED_ID and kind != "conversation" and lang is not None and lang.strip().lower() == "en":
            body = fx.translated
            if kind == "thread":
                body = dict(body, thread=[body["status"]])
            return Answer(200, body)
        query.pop("about_account", None)
        query.pop("aboutAccount", None)
        if not sid.isdigit():
            return Answer(400, {"code": 400, "message": "id: tweet ID must be a numeric snowflake"})
        if sid == RATE_LIMITED_ID:
            return Answer(429, fx.rate_limited, {"Retry-After": RETRY_AFTER})
        if kind == "conversation":
            ranking = query.pop("ranking_mode", "likes")
            cursor = query.pop("cursor", None)
            if ranking not in ("likes", "recency"):
                return Answer(400, {"code": 400, "message": "ranking_mode: Invalid enum value. Expected 'likes' | 'recency'"})
            if query:
                return Answer(404, NOT_FOUND)
            if sid == PRIVATE_ID:
                return Answer(401, dict(fx.private, replies=None, cursor=None))
            body = fx.conversation.get(sid)
            if body is None:
                return Answer(404, {"status": None, "thread": None, "replies": None, "author": None, "cursor": None, "code": 404})
            if cursor is not None:
                focal = body["status"]
                return Answer(200, {"status": focal, "thread": [focal], "replies": [], "author": body["author"], "cursor": None, "code": 200})
            return Answer(200, body)
        if query:
            return Answer(404, NOT_FOUND)
        if sid == PRIVATE_ID:
            return Answer(401, fx.private)
        if sid == FAILED_POST_ID:
            return Answer(500, {"status": None, "thread": None, "author": None, "code": 500})
        if len(sid) == 19 and sid.startswith(MANY_POSTS_PREFIX):
            body = renamed_post(fx.status["2087208847298015232"], sid)
            if kind == "thread":
                body = dict(body, thread=[body["status"]])
            return Answer(200, body)
        table = fx.status if kind == "status" else fx.thread
        body = table.get(sid)
        if body is None and kind == "thread" and sid in fx.status:
            # A post with no thread context: /2/thread answers it alone.
            plain = fx.status[sid]
            body = dict(plain, thread=[plain["status"]])
        if body is None:
            return Answer(404, fx.not_found)
        return Answer(200, body)

    if kind == "profile" and len(parts) in (3, 4):
        handle = parts[2]
        sub = parts[3] if len(parts) == 4 else None
        query.pop("about_account", None)
        query.pop("lang", None)
        if bad_count:
            return bad_count
        known = handle.lower() == HANDLE
        if sub is None:
            if query:
                return Answer(404, NOT_FOUND)
            return Answer(200, fx.profile) if known else Answer(404, USER_NOT_FOUND)
        if sub == "statuses":
            cursor = query.pop("cursor", None)
            with_replies = query.pop("with_replies", None)
            since = query.pop("since", None)
            query.pop("groupthreads", None)
            if since is not None:
                value = js_number(since)
                if value is None or value != value or value in (float("inf"), float("-inf")):
                    return Answer(400, {"code": 400, "message": "since: Invalid input: expected number, received NaN"})
                if value < 0:
                    return Answer(400, {"code": 400, "message": "since: Too small: expected number to be >=0"})
            if query:
                return Answer(404, NOT_FOUND)
            if not known:
                return Answer(404, UNKNOWN_USER_LIST)
            if with_replies is not None and with_replies.lower() in TRUTHY:
                page = timeline_page(fx.timelines["replies"], cursor)
            else:
                page = statuses_page(fx, cursor)
            if since is not None and cursor is None:
                # routes/twitter.ts: without a cursor, 204 when no post of
                # the page is newer than `since` (ms from 1e12 on).
                since_ms = value if value >= 1e12 else value * 1000
                if not any(r.get("created_timestamp", 0) * 1000 > since_ms for r in page["results"]):
                    return Answer(204, None)
            return Answer(200, page)
        if sub in ("media", "articles"):
            cursor = query.pop("cursor", None)
            if query:
                return Answer(404, NOT_FOUND)
            if not known:
                return Answer(404, UNKNOWN_USER_LIST)
            return Answer(200, timeline_page(fx.timelines[sub], cursor))
        if sub == "about":
            if query:
                return Answer(404, NOT_FOUND)
            return Answer(200, fx.about) if known else Answer(404, USER_NOT_FOUND)
        if sub in ("followers", "following"):
            cursor = query.pop("cursor", None)
            if query:
                return Answer(404, NOT_FOUND)
            if not known:
                return Answer(404, UNKNOWN_USER_LIST)
            if cursor is None:
                return Answer(200, fx.followers)
            return Answer(200, EMPTY_LIST)
        return Answer(404, NOT_FOUND)

    if kind == "search" and len(parts) == 2:
        if bad_count:
            return bad_count
        q = query.pop("q", None)
        feed = query.pop("feed", "latest")
        cursor = query.pop("cursor", None)
        query.pop("lang", None)
        if query:
            return Answer(404, NOT_FOUND)
        if q is None or not q.replace("_", "").strip():
            return Answer(400, {"code": 400, "message": "q: Search query must not be empty"})
        if len(q) > 512:
            return Answer(400, {"code": 400, "message": f"q: Raw query length {len(q)} exceeds max allowed 512"})
        if feed not in ("latest", "top", "media"):
            return Answer(400, {"code": 400, "message": "feed: Invalid enum value. Expected 'latest' | 'top' | 'media'"})
        if q == "outage":
            return Answer(404, fx.search_outage)
        if q != "fixture cache" or feed != "latest":
            return Answer(200, EMPTY_LIST)
        if cursor is None:
            return Answer(200, fx.search)
        return Answer(200, EMPTY_LIST)

    if kind == "trends" and len(parts) == 2:
        kind_of = query.pop("type", "trending")
        count = query.pop("count", "20")
        if query:
            return Answer(404, NOT_FOUND)
        if kind_of != "trending":
            return Answer(400, {"code": 400, "message": "type: Invalid option: expected \"trending\""})
        try:
            n = int(count)
        except ValueError:
            n = 0
        if not 1 <= n <= 50:
            return Answer(400, {"code": 400, "message": "count: Too big or too small: expected number between 1 and 50"})
        return Answer(200, dict(fx.trends, trends=fx.trends["trends"][:n]))

    if kind == "typeahead" and len(parts) == 2:
        if query.get("q") == "demo" and query.get("result_type", "users") == "users":
            return Answer(200, fx.typeahead)
        q = query.get("q", "")
        return Answer(404, {"code": 404, "query": q, "num_results": 0, "users": [], "topics": [], "events": []})

    return Answer(404, NOT_FOUND)


def status_list(fx, sid, which, query):
    """A post's quotes or reposts page (upstream.md section 6.1)."""
    cursor = query.pop("cursor", None)
    if which == "quotes":
        query.pop("lang", None)
    if query:
        return Answer(404, NOT_FOUND)
    if not sid.isdigit():
        return Answer(400, fx.bad_id)
    if sid == RATE_LIMITED_ID:
        return Answer(429, fx.rate_limited, {"Retry-After": RETRY_AFTER})
    lists = fx.status_lists[which]
    if sid == NO_TIMELINE_ID:
        return Answer(404, lists["no_timeline"])
    if sid == FAILED_LIST_ID:
        return Answer(500, lists["failed"])
    if sid != "2087208847298015232":
        if which == "quotes":
            return Answer(200, EMPTY_LIST)
        return Answer(404, lists["no_timeline"])
    pages = lists["pages"]
    if cursor is None:
        return Answer(200, pages[0])
    for i, page in enumerate(pages[:-1]):
        if page["cursor"]["bottom"] == cursor:
            return Answer(200, pages[i + 1])
    # Past the end (or an unknown cursor): X answers the empty page again.
    return Answer(200, pages[-1])


def timeline_page(pages, cursor):
    """A two-page timeline: page 1, then by its bottom cursor the empty
    page 2, which X answers again past the end."""
    if cursor is None:
        return pages[0]
    if cursor == pages[0]["cursor"]["bottom"]:
        return pages[1]
    return EMPTY_LIST


def statuses_page(fx, cursor):
    """The profile timeline page for a cursor (None = first page)."""
    if cursor is None:
        return fx.pages[0]
    for i, page in enumerate(fx.pages[:-1]):
        if page["cursor"]["bottom"] == cursor:
            return fx.pages[i + 1]
    # A forged cursor (upstream.md 2.4): continue after the post it names.
    rows = fx.pages[0]["results"] + fx.pages[1]["results"]
    sort_index = timeline_cursor_sort_index(cursor)
    after = None
    if sort_index is not None:
        for i, row in enumerate(rows):
            if row["id"] == sort_index:
                after = rows[i + 1 :]
                break
        if after is None:
            after = [r for r in rows if int(r["id"]) < int(sort_index)]
    if not after:
        return fx.pages[2]
    return {
        "code": 200,
        "results": after[:20],
        "cursor": {"top": forge_cursor(after[0]["id"]), "bottom": forge_cursor(after[:20][-1]["id"])},
    }


class Counter:
    """Request counts by path+query, for the /__fake/requests hook."""

    def __init__(self):
        self.lock = threading.Lock()
        self.paths = {}
        self.hosts = {}
        self.sni = {}

    def add(self, target, host, sni):
        with self.lock:
            self.paths[target] = self.paths.get(target, 0) + 1
            self.hosts[host] = self.hosts.get(host, 0) + 1
            if sni is not None:
                self.sni[sni] = self.sni.get(sni, 0) + 1

    def snapshot(self):
        with self.lock:
            return {"total": sum(self.paths.values()), "paths": dict(self.paths),
                    "hosts": dict(self.hosts), "sni": dict(self.sni)}

    def reset(self):
        with self.lock:
            self.paths.clear()
            self.hosts.clear()
            self.sni.clear()


def make_handler(fx, counter, rate_limit_all, verbose, delay=0.0):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Without this, headers and body leave as two writes and Nagle plus
        # delayed ACK stall every keep-alive request by ~40 ms.
        disable_nagle_algorithm = True
        server_version = "fake-fxtwitter/1"
        sys_version = ""

        def log_message(self, fmt, *args):
            if verbose:
                sys.stderr.write("fake_upstream: " + (fmt % args) + "\n")

        def send_json(self, answer):
            data = b"" if answer.body is None else json.dumps(answer.body).encode()
            self.send_response(answer.status)
            if answer.body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Access-Control-Allow-Origin", "*")
            for k, v in answer.headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def do_GET(self):
            split = urlsplit(self.path)
            if split.path == "/__fake/requests":
                return self.send_json(Answer(200, counter.snapshot()))
            sni = None
            if isinstance(self.connection, ssl.SSLSocket):
                sni = getattr(self.connection, "xmd_sni", "")
            counter.add(self.path, self.headers.get("Host", ""), sni)
            if delay and split.path.startswith("/2/"):
                time.sleep(delay)
            if not self.headers.get("User-Agent"):
                return self.send_json(Answer(401, {
                    "error": "You must identify yourself with a User-Agent header in order to use the FxTwitter API. "
                    "Please use a descriptive User-Agent that identifies your app."
                }))
            if len(split.path) > 1 and split.path.endswith("/"):
                location = split.path.rstrip("/") + (("?" + split.query) if split.query else "")
                return self.send_json(Answer(301, None, {"Location": location}))
            if rate_limit_all and split.path.startswith("/2/"):
                return self.send_json(Answer(429, fx.rate_limited, {"Retry-After": RETRY_AFTER}))
            query = dict(parse_qsl(split.query, keep_blank_values=True))
            try:
                answer = route(fx, split.path, query)
            except Exception as e:  # a bug here must show, not hang the client
                sys.stderr.write(f"fake_upstream: error on {self.path}: {e!r}\n")
                answer = Answer(500, {"code": 500, "message": "fake upstream error"})
            self.send_json(answer)

        do_HEAD = do_GET

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if urlsplit(self.path).path == "/__fake/reset":
                counter.reset()
                return self.send_json(Answer(200, {"ok": True}))
            self.send_json(Answer(404, NOT_FOUND))

    return Handler


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="Loopback FxTwitter v2 imitation serving fixtures.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--fixtures", default=os.path.join(here, "fixtures"))
    p.add_argument("--rate-limit", action="store_true", help="answer every /2/ request with 429")
    p.add_argument("--verbose", action="store_true", help="log each request to stderr")
    p.add_argument("--delay-ms", type=int, default=0, help="hold every /2/ answer this long")
    p.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    p.add_argument("--tls-key", help="the certificate's private key (PEM)")
    args = p.parse_args(argv)

    fx = Fixtures(args.fixtures)
    handler = make_handler(fx, Counter(), args.rate_limit, args.verbose, args.delay_ms / 1000)
    server = ThreadingHTTPServer((args.host, args.port), handler)
    server.daemon_threads = True
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)

        def remember_sni(sock, name, _ctx):
            sock.xmd_sni = name or ""

        ctx.sni_callback = remember_sni
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    if args.port == 0:
        print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
