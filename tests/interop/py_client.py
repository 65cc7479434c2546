#!/usr/bin/env python3
"""Interop check with the official Python MCP SDK (v2, `pip install 'mcp>=2'`).

Usage: py_client.py MCP_URL MODE [UPSTREAM_URL]
  MODE "auto"   - the SDK default: probes server/discover, must adopt 2026-07-28
  MODE "legacy" - forces the initialize handshake, must negotiate 2025-11-25
  UPSTREAM_URL  - the fake FxTwitter upstream (tests/interop/fake_upstream.py)
                  xmd was started with; adds the "upstream" check that every
                  tool's request reached it, with the path and query xmd sends

The server must be backed by the fake upstream: every tool is called with
arguments its fixtures answer, and the expected values are read from the same
fixture files (tests/interop/fixtures). Each tools/call check asserts exact
values in structuredContent and the Markdown, and validates structuredContent
against the tool's advertised outputSchema with the `jsonschema` package
(Draft 2020-12). So that a permissive schema cannot pass vacuously, a copy of
the result with `truncated` removed, and one whose first post's `id` or first
user's `screen_name` is a number, must each be rejected by the same schema.

Prints one line per check, "PASS <label> <check>: ..." or "FAIL <label>
<check>: ...", and exits 1 if any check failed. Checks that cannot run after
an earlier failure are reported as FAIL too, so the count of lines is the same
on every run.
"""

import asyncio
import copy
import json
import os
import sys
import traceback
import urllib.request

import jsonschema
from mcp import Client

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
EXPECTED_TOOLS = [
    "x_md_get_post",
    "x_md_get_profile",
    "x_md_search_posts",
    "x_md_get_followers",
    "x_md_get_following",
    "x_md_get_quotes",
    "x_md_get_reposts",
    "x_md_get_trends",
]
HANDLE = "demo_author"
POST_ID = "2087208847298015232"
POST_URL = f"https://x.com/{HANDLE}/status/{POST_ID}"
SEARCH_Q = "fixture cache"
USERS_Q = "demo"
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}
# The page size xmd always asks the upstream for (src/x/browse.rs page_path).
UPSTREAM_COUNT = 20
# One upstream request each tool call below must have made (path and query
# exactly as xmd writes them).
UPSTREAM_PATHS = [
    f"/2/status/{POST_ID}",
    f"/2/profile/{HANDLE}",
    f"/2/profile/{HANDLE}/statuses?count={UPSTREAM_COUNT}&with_replies=false",
    f"/2/search?q=fixture+cache&feed=latest&count={UPSTREAM_COUNT}",
    f"/2/typeahead?q={USERS_Q}&result_type=users",
    f"/2/profile/{HANDLE}/followers?count={UPSTREAM_COUNT}",
    f"/2/profile/{HANDLE}/following?count={UPSTREAM_COUNT}",
    f"/2/status/{POST_ID}/quotes?count={UPSTREAM_COUNT}",
    f"/2/status/{POST_ID}/reposts?count={UPSTREAM_COUNT}",
    # Issue 31.
    f"/2/profile/{HANDLE}/media?count={UPSTREAM_COUNT}",
    f"/2/profile/{HANDLE}/articles?count={UPSTREAM_COUNT}",
    f"/2/profile/{HANDLE}/statuses?count={UPSTREAM_COUNT}&with_replies=true",
    f"/2/profile/{HANDLE}/statuses?count={UPSTREAM_COUNT}&with_replies=false&since=1786400000",
    f"/2/profile/{HANDLE}/statuses?count={UPSTREAM_COUNT}&with_replies=false&since=1786600000",
    f"/2/profile/{HANDLE}/about",
    "/2/trends?type=trending&count=50",
    "/2/status/2087208847298015300?lang=en",
    f"/2/status/{POST_ID}?lang=es",
]
# Issue 31: a `since` between the fixture timeline's posts (two originals of
# page 1 are newer), one after all of them (FxTwitter's 204), the translated
# post.
SINCE_SOME = 1786400000
SINCE_NONE = "1786600000"
TRANSLATED_ID = "2087208847298015300"
# A post whose reposts list the fake upstream answers with the empty 404
# (tests/interop/fake_upstream.py NO_TIMELINE_ID).
NO_TIMELINE_ID = "2086000000000000404"
# The largest thread the fake upstream serves (tests/interop/fake_upstream.py):
# 64 posts of 25,000 characters. Read whole through next_cursor, every result
# within xmd's default budget of 60,000 characters (issue 14).
LONG_THREAD_ID = "1900000000000000000"
LONG_THREAD_POSTS = 64
RESULT_BUDGET_CHARS = 60000
CALLS = [
    "call x_md_get_post",
    "call x_md_get_post largest thread",
    "call x_md_get_profile",
    "call x_md_search_posts latest",
    "call x_md_search_posts users",
    "call x_md_get_followers",
    "call x_md_get_following",
    "call x_md_get_quotes",
    "call x_md_get_reposts paged",
    "call x_md_get_reposts not found",
    "call x_md_get_profile media",
    "call x_md_get_profile articles full",
    "call x_md_get_profile with_replies",
    "call x_md_get_profile since",
    "call x_md_get_profile since none newer",
    "call x_md_get_profile since refused",
    "call x_md_get_trends",
    "call x_md_get_post lang",
    "call x_md_get_post lang missing",
]
TIMEOUT_S = 60


def load(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


class Expected:
    """What each call must return, read from the fixture files."""

    def __init__(self):
        self.post_text = load("status-plain.json")["status"]["text"]
        self.user = load("profile.json")["user"]
        timeline = load("profile-statuses-page1.json")["results"] + load("profile-statuses-page2.json")["results"]
        # x_md_get_profile lists the account's own posts: no reposts, no replies
        # (the upstream timeline is asked with_replies=false; reposts and the
        # self-reply in the fixtures are left out by xmd).
        self.profile_post_ids = [
            p["id"]
            for p in timeline
            if p["author"]["screen_name"] == HANDLE and not p.get("reposted_by") and not p.get("replying_to")
        ]
        self.search_ids = [p["id"] for p in load("search-latest.json")["results"]]
        self.typeahead = [u["screen_name"] for u in load("search-users-typeahead.json")["users"]]
        self.followers = [u["screen_name"] for u in load("followers-page1.json")["results"]]
        self.quote_ids = [p["id"] for n in (1, 2) for p in load(f"quotes-page{n}.json")["results"]]
        self.reposters = [u["screen_name"] for n in (1, 2) for u in load(f"reposts-page{n}.json")["results"]]
        self.media_ids = [p["id"] for p in load("profile-media-page1.json")["results"]]
        self.article_titles = [p["article"]["title"] for p in load("profile-articles-page1.json")["results"]]
        self.about = load("profile-about.json")["about_account"]
        replies = load("profile-replies-page1.json")["results"]
        self.replies_ids = [p["id"] for p in replies if p["author"]["screen_name"] == HANDLE and not p.get("reposted_by")]
        self.since_ids = [
            p["id"]
            for p in load("profile-statuses-page1.json")["results"]
            if p["author"]["screen_name"] == HANDLE and not p.get("reposted_by") and not p.get("replying_to")
            and p["created_timestamp"] > SINCE_SOME
        ]
        self.trends = load("trends.json")["trends"]
        self.translation = load("status-translated.json")["status"]["translation"]


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def schema_problems(schema, sc):
    """Validates `sc` against `schema` (Draft 2020-12); returns a list of
    problems, empty when valid and the schema is shown to constrain."""
    if not isinstance(schema, dict):
        return [f"the tool advertises no outputSchema ({schema!r})"]
    declared = schema.get("$schema")
    if declared not in (None, "https://json-schema.org/draft/2020-12/schema"):
        return [f"outputSchema declares $schema {declared!r}, not Draft 2020-12"]
    cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        return [f"outputSchema is not a valid Draft 2020-12 schema: {e.message}"]
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(sc), key=lambda e: list(e.absolute_path))
    if errors:
        return [
            f"structuredContent fails outputSchema at /{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in errors[:3]
        ]
    problems = []
    no_required = {k: v for k, v in sc.items() if k != "truncated"}
    if validator.is_valid(no_required):
        problems.append("outputSchema accepts a result without `truncated` (schema does not constrain)")
    # A list item whose identifying field has the wrong type must be refused
    # (the item schemas of users require no field: FxTwitter sends partial
    # users, so a type error is the mutation every item schema must catch).
    for key, field in (("posts", "id"), ("users", "screen_name")):
        if isinstance(sc.get(key), list) and sc[key] and isinstance(sc[key][0], dict):
            bogus = copy.deepcopy(sc)
            bogus[key][0][field] = 12345
            if validator.is_valid(bogus):
                problems.append(f"outputSchema accepts a number as {key}[0].{field} (items are not constrained)")
    return problems


async def run(url, mode, report):
    want = Expected()
    async with Client(url, mode=mode, read_timeout_seconds=20) as client:
        got = client.protocol_version
        info = client.server_info
        if got != EXPECTED_VERSION[mode]:
            report("connect", False, f"protocol_version {got!r}, want {EXPECTED_VERSION[mode]!r}")
            return
        report("connect", True, f"protocol_version {got}, server {info.name if info else '?'} {info.version if info else '?'}")

        tools = (await client.list_tools()).tools
        names = [t.name for t in tools]
        schemas = {t.name: t.output_schema for t in tools}
        if sorted(names) != sorted(EXPECTED_TOOLS) or len(names) != len(EXPECTED_TOOLS):
            report("tools/list", False, f"tool names {names}, want exactly {EXPECTED_TOOLS}")
        else:
            report("tools/list", True, f"{len(names)} tools: {', '.join(names)}")

        async def call(check, tool, arguments, verify):
            """Calls `tool`; `verify(sc, text)` returns a list of problems."""
            result = await client.call_tool(tool, arguments)
            text = text_of(result)
            sc = result.structured_content
            problems = []
            if result.is_error:
                problems.append(f"isError is true: {text[:200]!r}")
            if not isinstance(sc, dict):
                problems.append(f"structuredContent is {type(sc).__name__}, want an object")
            else:
                if "markdown" in sc:
                    problems.append("structuredContent carries a second copy of the Markdown")
                problems += verify(sc, text)
                problems += schema_problems(schemas.get(tool), sc)
            if problems:
                report(check, False, "; ".join(problems))
            else:
                n = {k: len(sc[k]) for k in ("posts", "users", "trends") if isinstance(sc.get(k), list)}
                report(check, True, f"{len(text)} chars of Markdown, {n or 'one post'}, exact fixture values, valid against outputSchema")

        def ids(items):
            return [str(p.get("id")) for p in items or []]

        async def long_thread(check):
            """Reads the largest thread through next_cursor: no SDK error
            (every SSE event under its 1 MiB limit), every result within
            the budget and valid, each post once and in order."""
            args = {"handle": HANDLE, "id": LONG_THREAD_ID, "replies": "off"}
            seen, calls, largest = [], 0, 0
            while True:
                result = await client.call_tool("x_md_get_post", args)
                calls += 1
                text = text_of(result)
                sc = result.structured_content
                largest = max(largest, len(text))
                problems = []
                if result.is_error or not isinstance(sc, dict):
                    problems.append(f"call {calls}: isError {result.is_error}: {text[:200]!r}")
                elif len(text) > RESULT_BUDGET_CHARS:
                    problems.append(f"call {calls}: {len(text)} characters, over the budget")
                else:
                    problems += schema_problems(schemas.get("x_md_get_post"), sc)
                if problems:
                    report(check, False, "; ".join(problems))
                    return
                seen += ids(sc.get("posts"))
                if not sc.get("truncated"):
                    break
                cursor = sc.get("next_cursor")
                if f'cursor="{cursor}"' not in text:
                    report(check, False, f"call {calls}: the note lacks cursor=\"{cursor}\"")
                    return
                args = dict(args, cursor=cursor)
            want = [str(int(LONG_THREAD_ID) + i) for i in range(LONG_THREAD_POSTS)]
            if seen != want:
                report(check, False, f"posts read {len(seen)} ({seen[:3]}...), want the {len(want)} thread posts once, in order")
            else:
                report(check, True, f"{LONG_THREAD_POSTS} posts of 25,000 characters in {calls} results, the largest {largest} characters; each post once, in order")

        def handles(items):
            return [u.get("screen_name") for u in items or []]

        def post_ok(sc, text):
            p = []
            if want.post_text not in text:
                p.append(f"text lacks the fixture post text; starts {text[:160]!r}")
            if sc.get("post_count") != 1 or ids(sc.get("posts")) != [POST_ID]:
                p.append(f"posts {ids(sc.get('posts'))} (post_count {sc.get('post_count')}), want [{POST_ID}]")
            return p

        def profile_ok(sc, text):
            p = []
            user = sc.get("profile") or {}
            if sc.get("resource") != "profile" or sc.get("handle") != HANDLE:
                p.append(f"resource/handle {sc.get('resource')!r}/{sc.get('handle')!r}")
            if user.get("screen_name") != want.user["screen_name"] or user.get("name") != want.user["name"]:
                p.append(f"profile {user.get('name')!r} @{user.get('screen_name')}, want {want.user['name']!r}")
            if ids(sc.get("posts")) != want.profile_post_ids:
                p.append(f"post ids {ids(sc.get('posts'))}, want {want.profile_post_ids}")
            if f"{want.user['name']} (@{HANDLE})" not in text:
                p.append("Markdown lacks the profile heading")
            return p

        def search_ok(sc, text):
            p = []
            if (sc.get("resource"), sc.get("query"), sc.get("feed")) != ("search", SEARCH_Q, "latest"):
                p.append(f"resource/query/feed {sc.get('resource')!r}/{sc.get('query')!r}/{sc.get('feed')!r}")
            if ids(sc.get("posts")) != want.search_ids:
                p.append(f"post ids {ids(sc.get('posts'))}, want {want.search_ids}")
            missing = [i for i in want.search_ids if f"/status/{i})" not in text]
            if missing:
                p.append(f"Markdown lacks links to {missing}")
            return p

        def users_ok(sc, text):
            p = []
            if (sc.get("resource"), sc.get("query"), sc.get("feed")) != ("search", USERS_Q, "users"):
                p.append(f"resource/query/feed {sc.get('resource')!r}/{sc.get('query')!r}/{sc.get('feed')!r}")
            if handles(sc.get("users")) != want.typeahead:
                p.append(f"users {handles(sc.get('users'))}, want {want.typeahead}")
            missing = [h for h in want.typeahead if f"(@{h})" not in text]
            if missing:
                p.append(f"Markdown lacks {missing}")
            return p

        def list_ok(which):
            def check(sc, text):
                p = []
                if sc.get("resource") != which or sc.get("handle") != HANDLE:
                    p.append(f"resource/handle {sc.get('resource')!r}/{sc.get('handle')!r}, want {which!r}/{HANDLE!r}")
                if handles(sc.get("users")) != want.followers:
                    p.append(f"users {handles(sc.get('users'))}, want {want.followers}")
                if f"# @{HANDLE} {which}" not in text:
                    p.append(f"Markdown lacks the heading '# @{HANDLE} {which}'")
                return p

            return check

        await call(CALLS[0], "x_md_get_post", {"url": POST_URL, "thread": "off"}, post_ok)
        await long_thread(CALLS[1])
        await call(CALLS[2], "x_md_get_profile", {"handle": HANDLE}, profile_ok)
        await call(CALLS[3], "x_md_search_posts", {"q": SEARCH_Q}, search_ok)
        await call(CALLS[4], "x_md_search_posts", {"q": USERS_Q, "feed": "users"}, users_ok)
        await call(CALLS[5], "x_md_get_followers", {"handle": HANDLE}, list_ok("followers"))
        await call(CALLS[6], "x_md_get_following", {"handle": "@" + HANDLE}, list_ok("following"))

        def quotes_ok(sc, text):
            p = []
            if (sc.get("resource"), sc.get("handle"), sc.get("id")) != ("quotes", HANDLE, POST_ID):
                p.append(f"resource/handle/id {sc.get('resource')!r}/{sc.get('handle')!r}/{sc.get('id')!r}")
            if ids(sc.get("posts")) != want.quote_ids:
                p.append(f"post ids {ids(sc.get('posts'))}, want {want.quote_ids}")
            if "next_cursor" in sc:
                p.append("next_cursor after the empty last page")
            missing = [i for i in want.quote_ids if f"/status/{i})" not in text]
            if missing:
                p.append(f"Markdown lacks links to {missing}")
            return p

        await call(CALLS[7], "x_md_get_quotes", {"url": POST_URL}, quotes_ok)

        async def reposts_paged(check):
            """Walks x_md_get_reposts two rows at a time by next_cursor:
            every reposter once, in order, each result valid."""
            args = {"handle": HANDLE, "id": POST_ID, "limit": 2}
            seen, calls = [], 0
            while calls < 10:
                result = await client.call_tool("x_md_get_reposts", args)
                calls += 1
                sc = result.structured_content
                if result.is_error or not isinstance(sc, dict):
                    report(check, False, f"call {calls}: isError {result.is_error}: {text_of(result)[:200]!r}")
                    return
                problems = schema_problems(schemas.get("x_md_get_reposts"), sc)
                if sc.get("resource") != "reposts":
                    problems.append(f"resource {sc.get('resource')!r}")
                if problems:
                    report(check, False, f"call {calls}: " + "; ".join(problems))
                    return
                seen += handles(sc.get("users"))
                if "next_cursor" not in sc:
                    break
                args = dict(args, cursor=sc["next_cursor"])
            if seen != want.reposters:
                report(check, False, f"reposters {seen}, want {want.reposters} once, in order")
            else:
                report(check, True, f"{len(seen)} reposters in {calls} results of 2, each once, in order, valid against outputSchema")

        await reposts_paged(CALLS[8])
        result = await client.call_tool("x_md_get_reposts", {"handle": HANDLE, "id": NO_TIMELINE_ID})
        text = text_of(result)
        want_text = f"Post {NO_TIMELINE_ID} was not found, or X does not list its reposts. (HTTP 404, code not_found)"
        if not result.is_error or text != want_text or result.structured_content is not None:
            report(CALLS[9], False, f"isError {result.is_error}, text {text[:200]!r}, want {want_text!r}")
        else:
            report(CALLS[9], True, f"isError with {text!r}")

        await readers(client, schemas, want, report, call, ids)

        resources = await client.list_resources()
        uris = [str(r.uri) for r in resources.resources]
        llms = [u for u in uris if u.endswith("/llms.txt")]
        if not llms:
            report("resources", False, f"no llms.txt among resources {uris}")
            return
        read = await client.read_resource(llms[0])
        body = "".join(getattr(c, "text", "") for c in read.contents)
        if "/mcp" not in body or "x_md_get_post" not in body:
            report("resources", False, f"{llms[0]} does not name the endpoint and tools; starts {body[:200]!r}")
        else:
            report("resources", True, f"{len(uris)} resources; read {llms[0]} ({len(body)} chars)")


async def readers(client, schemas, want, report, call, ids):
    """Issue 31 through the SDK: the profile's media, articles (with its
    About data), replies, `since` (newer posts; FxTwitter's 204; a refused
    value as -32602 with the inputSchema), the trends, and `lang`."""

    def profile_feed(feed, want_ids=None, extra=None):
        def check(sc, text):
            p = []
            if sc.get("resource") != "profile" or sc.get("feed", "posts") != feed:
                p.append(f"resource/feed {sc.get('resource')!r}/{sc.get('feed')!r}, want profile/{feed}")
            if want_ids is not None and ids(sc.get("posts")) != want_ids:
                p.append(f"post ids {ids(sc.get('posts'))}, want {want_ids}")
            if "next_cursor" in sc:
                p.append("next_cursor after the timeline's end")
            if extra:
                p += extra(sc, text)
            return p

        return check

    await call(CALLS[10], "x_md_get_profile", {"handle": HANDLE, "feed": "media"},
               profile_feed("media", want.media_ids, lambda sc, t: [] if "## Latest posts with media" in t else ["no media heading"]))

    def articles(sc, text):
        p = []
        titles = [x.get("article", {}).get("title") for x in sc.get("posts") or []]
        if titles != want.article_titles:
            p.append(f"article titles {titles}, want {want.article_titles}")
        if sc.get("about") != want.about:
            p.append(f"about {sc.get('about')!r}, want {want.about!r}")
        line = f"About: Based in: {want.about['based_in']} (accurate)"
        if line not in text:
            p.append(f"Markdown lacks {line!r}")
        return p

    await call(CALLS[11], "x_md_get_profile", {"handle": HANDLE, "feed": "articles", "full": True},
               profile_feed("articles", None, articles))

    def replies(sc, text):
        p = []
        if sc.get("with_replies") is not True:
            p.append(f"with_replies {sc.get('with_replies')!r}")
        if "· Replying to @demo_friend" not in text:
            p.append("the reply is not marked as one")
        return p

    await call(CALLS[12], "x_md_get_profile", {"handle": HANDLE, "with_replies": True},
               profile_feed("posts", want.replies_ids, replies))
    await call(CALLS[13], "x_md_get_profile", {"handle": HANDLE, "since": SINCE_SOME},
               profile_feed("posts", want.since_ids, lambda sc, t: [] if sc.get("since") == str(SINCE_SOME) else [f"since {sc.get('since')!r}"]))

    def none_newer(sc, text):
        if "No new posts since 2026-08-13T05:46:40Z." not in text:
            return [f"Markdown lacks the no-new-posts line: {text[-200:]!r}"]
        return []

    await call(CALLS[14], "x_md_get_profile", {"handle": HANDLE, "since": SINCE_NONE},
               profile_feed("posts", [], none_newer))

    # A `since` FxTwitter refuses: the bad-argument error, -32602 with the
    # tool's inputSchema in error.data, raised by the SDK.
    try:
        result = await client.call_tool("x_md_get_profile", {"handle": HANDLE, "since": "yesterday"})
        report(CALLS[15], False, f"answered, isError {result.is_error}: {text_of(result)[:200]!r}")
    except Exception as e:  # noqa: BLE001 - the SDK's error type differs across versions
        err = getattr(e, "error", None)
        code = getattr(err, "code", None)
        message = getattr(err, "message", str(e))
        data = getattr(err, "data", None)
        schema = (data or {}).get("inputSchema", {}) if isinstance(data, dict) else {}
        if code != -32602 or "`since` must be a Unix time" not in message or "since" not in schema.get("properties", {}):
            report(CALLS[15], False, f"{type(e).__name__}: code {code}, message {message[:200]!r}, data keys {list((data or {}).keys()) if isinstance(data, dict) else data!r}")
        else:
            report(CALLS[15], True, f"-32602 {message[:120]!r} with the inputSchema")

    def trends(sc, text):
        p = []
        got = [t.get("name") for t in sc.get("trends") or []]
        if got != [t["name"] for t in want.trends]:
            p.append(f"trends {got}")
        for t in sc.get("trends") or []:
            if "query" in t or not str(t.get("url", "")).startswith("https://x.com/search?q="):
                p.append(f"trend {t!r}: a copy of the name as `query`, or no search link")
        if "# Trending on X" not in text:
            p.append("no heading")
        return p

    await call(CALLS[16], "x_md_get_trends", {}, trends)

    def translated(sc, text):
        p = []
        t = want.translation
        line = f"Translation from {t['source_lang_en']} ({t['source_lang']}) into {t['target_lang']}, by {t['provider']}:"
        if line not in text or f"> {t['text']}" not in text:
            p.append(f"Markdown lacks {line!r} and the quoted translation")
        if ((sc.get("posts") or [{}])[0].get("translation") or {}).get("text") != t["text"]:
            p.append("structuredContent lacks the translation")
        return p

    await call(CALLS[17], "x_md_get_post", {"handle": HANDLE, "id": TRANSLATED_ID, "thread": "off", "lang": "en"}, translated)

    def missing(sc, text):
        note = "No translation into es: FxTwitter gave none for this post (its language: en); the original is shown."
        if sc.get("warnings") != [note] or want.post_text not in text:
            return [f"warnings {sc.get('warnings')!r}, want [{note!r}] and the original"]
        return []

    await call(CALLS[18], "x_md_get_post", {"url": POST_URL, "thread": "off", "lang": "es"}, missing)


def check_upstream(upstream, report):
    """The fake upstream saw every request the calls above need (counts are
    cumulative over the fake's life, so a later run answered from xmd's cache
    still passes: the point is the path and query xmd writes)."""
    with urllib.request.urlopen(upstream.rstrip("/") + "/__fake/requests", timeout=10) as r:
        seen = json.load(r)["paths"]
    missing = [p for p in UPSTREAM_PATHS if not seen.get(p)]
    if missing:
        report("upstream", False, f"the fake upstream never saw {missing}; it saw {sorted(seen)}")
    else:
        report("upstream", True, f"the fake upstream saw all {len(UPSTREAM_PATHS)} expected requests (count={UPSTREAM_COUNT})")


def leaves(e):
    """The innermost exceptions of (nested) exception groups."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for x in e.exceptions for leaf in leaves(x)]
    return [e]


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[2] not in EXPECTED_VERSION:
        sys.stderr.write(__doc__)
        return 2
    url, mode = sys.argv[1], sys.argv[2]
    upstream = sys.argv[3] if len(sys.argv) == 4 else None
    checks = ["connect", "tools/list", *CALLS, "resources"] + (["upstream"] if upstream else [])
    label = f"py-{mode}"
    done = {}

    def report(check, ok, detail):
        done[check] = ok
        one_line = " ".join(str(detail).split())
        print(f"{'PASS' if ok else 'FAIL'} {label} {check}: {one_line}", flush=True)

    try:
        asyncio.run(asyncio.wait_for(run(url, mode, report), TIMEOUT_S))
    except BaseException as e:  # noqa: BLE001 - every failure must become a FAIL line
        detail = "; ".join(f"{type(x).__name__}: {str(x)[:300]}" for x in leaves(e))
        traceback.print_exc(file=sys.stderr)
        pending = [c for c in checks if c not in done and c != "upstream"]
        if pending:
            report(pending[0], False, detail)
    if upstream:
        try:
            check_upstream(upstream, report)
        except Exception as e:  # noqa: BLE001
            report("upstream", False, f"{type(e).__name__}: {e}")
    for check in checks:
        if check not in done:
            report(check, False, "not run after an earlier failure")
    return 0 if all(done.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
