//! `x_md_get_profile` (upstream.md §2.2, §2.4, §2.5): the profile and one
//! page of the account's latest original posts, fetched concurrently so the
//! first page costs one upstream round trip.

use serde_json::json;

use super::args::{self, ProfileArgs, ProfileFeed};
use super::browse::{
    answer_errors, base_structured, check_account_list, continuation, cursor_error, fetch_profile,
    page_path, protected_error, walk_pages, BrowseResult, ListPage,
};
use super::budget::{fit_rows, Run};
use super::cursor::{self, CursorKind};
use super::error::{code, XError};
use super::fetcher::Fetcher;
use super::model::parse::Authors;
use super::model::status::{AboutEnvelope, Status};
use super::model::user::{AboutAccount, User};
use super::render::browse::{profile_markdown_with, ProfileView};
use super::structured::Structured;
use super::typed_read::fetch_typed;
use super::upstream::Upstream;

/// Upstream timeline pages one profile block may read (plus
/// `browse::PAGE_BUDGET_PER_BLOCK` per extra block in page mode). Default
/// 8; when reached the result holds the posts collected so far, a note
/// says so, and `next_cursor` continues from there. The timeline is walked
/// like every list (`browse::walk_list`): a cut inside an upstream page
/// continues at `<cursor>@<offset>`, a repeated row is skipped.
pub const PROFILE_PAGE_BUDGET: usize = 8;

/// True for a timeline row shown on a profile: the account's own original
/// post (no repost, no reply).
pub fn is_original_of(row: &Status, handle: &str) -> bool {
    let mine = |u: Option<&User>| {
        u.and_then(|a| a.screen_name.as_deref())
            .is_some_and(|h| h.eq_ignore_ascii_case(handle))
    };
    let own = mine(row.author.as_deref()) || mine(row.reposted_by.as_deref());
    let reposted = row
        .reposted_by
        .as_ref()
        .is_some_and(|u| u.screen_name.is_some() || u.id.is_some() || u.name.is_some());
    own && row.is_status() && !reposted && !row.is_reply()
}

/// True for a timeline row that is the account's own post (a reply or
/// not), never a repost.
pub fn is_own_post(row: &Status, handle: &str) -> bool {
    let mine = |u: Option<&User>| {
        u.and_then(|a| a.screen_name.as_deref())
            .is_some_and(|h| h.eq_ignore_ascii_case(handle))
    };
    let reposted = row
        .reposted_by
        .as_ref()
        .is_some_and(|u| u.screen_name.is_some() || u.id.is_some() || u.name.is_some());
    mine(row.author.as_deref()) && row.is_status() && !reposted
}

/// The upstream timeline of a profile call: its path and the parameters
/// after `count` (the first page's, then the others').
fn timeline(args: &ProfileArgs) -> (String, String, &'static str) {
    let handle = args.list.handle.as_str();
    match args.feed {
        ProfileFeed::Posts => {
            let extra = if args.with_replies {
                "&with_replies=true"
            } else {
                "&with_replies=false"
            };
            // `since` only counts upstream without a cursor (a 204 when
            // nothing on the first page is newer); later pages are
            // filtered here.
            let first = match &args.since {
                Some(s) => format!("{extra}&since={s}"),
                None => extra.to_string(),
            };
            (format!("/2/profile/{handle}/statuses"), first, extra)
        }
        ProfileFeed::Media => (format!("/2/profile/{handle}/media"), String::new(), ""),
        ProfileFeed::Articles => (format!("/2/profile/{handle}/articles"), String::new(), ""),
    }
}

/// What a profile cursor is bound to: the account (written) and the
/// timeline's shape (covered by the tag: a cursor of feed=media is refused
/// for feed=posts, one of with_replies for the plain timeline, one with a
/// `since` for another `since`). The default timeline binds nothing more,
/// so its cursors are the ones issued before these options existed.
pub fn profile_scope(args: &ProfileArgs) -> cursor::Bound {
    let mut bound = cursor::handle_scope(&args.list.handle);
    let mut parts = Vec::new();
    if args.feed != ProfileFeed::Posts {
        parts.push(format!("feed={}", args.feed.as_str()));
    }
    if args.with_replies {
        parts.push("with_replies=true".to_string());
    }
    if let Some(s) = &args.since {
        parts.push(format!("since={s}"));
    }
    bound.args = parts.join("&");
    bound
}

/// `since` in words: its ISO 8601 time, else the number as given.
pub fn since_words(since: &str) -> String {
    let ms = since.parse::<f64>().map(args::since_ms).unwrap_or(f64::NAN);
    let secs = (ms / 1000.0).floor();
    if (0.0..4.0e11).contains(&secs) {
        if let Some(iso) = super::render::date::iso_from_unix(secs as i64) {
            return iso;
        }
    }
    format!("Unix time {since}")
}

/// Fetches `/2/profile/{handle}/about`: X's "About this account", `None`
/// when X has none (also FxTwitter's 404: its query found nothing).
pub fn fetch_about(up: &dyn Upstream, handle: &str) -> Result<Option<AboutAccount>, XError> {
    let (resp, body) = fetch_typed(
        up,
        &format!("/2/profile/{handle}/about"),
        "an about answer",
        |b: &AboutEnvelope| b.code,
        Authors::Whole,
    )?;
    let body = body?;
    // FxTwitter answers 404 when X's "About" query gave nothing (its
    // `profileAboutAPI`); the profile itself was found: no About data.
    if resp.status == 404 || body.code == Some(404) {
        return Ok(None);
    }
    answer_errors(resp.status, body.code, body.message.as_deref())?;
    Ok(body.about_account)
}

/// Runs `x_md_get_profile`.
pub fn profile(f: &Fetcher, a: &ProfileArgs, run: &Run) -> Result<BrowseResult, XError> {
    let args = &a.list;
    let handle = args.handle.as_str();
    let scope = profile_scope(a);
    let start = match &args.cursor {
        Some(c) => Some(
            cursor::decode(&run.settings.cursor_key, c, CursorKind::Profile, &scope)
                .map_err(cursor_error)?,
        ),
        None => None,
    };
    let (base, first_extra, extra) = timeline(a);
    let first_cursor = start
        .as_ref()
        .map(|p| p.upstream.clone())
        .unwrap_or_default();
    let extra_for = |c: &str| {
        if c.is_empty() {
            first_extra.as_str()
        } else {
            extra
        }
    };
    let first_path = page_path(&base, &first_cursor, extra_for(&first_cursor));
    // The profile (and with `full` its "About") and the first timeline
    // page, concurrently: the profile on a side thread, the page here.
    let owned = handle.to_string();
    let full = args.full;
    let side = f.beside(move |up: &dyn Upstream| {
        let user = fetch_profile(up, &owned);
        let about = (full && user.is_ok()).then(|| fetch_about(up, &owned));
        (user, about)
    });
    let authors = Authors::for_rows(args.full);
    let first_page = check_account_list(f, &first_path, handle, authors);
    let (user, about) = side.join().unwrap_or_else(|| {
        (
            Err(XError::new(
                500,
                code::UPSTREAM_ERROR,
                "The profile request failed.",
            )),
            None,
        )
    });
    // Both fetches failed: when the profile was refused by the cool-down
    // that the page's own 429 started, the page's error names the cause.
    let mut user = match (user, &first_page) {
        (Err(u), Err(p)) if u.is_cooling_down() && !p.is_cooling_down() => Err(p.clone()),
        (user, _) => user,
    }?;
    if user.protected == Some(true) {
        return Err(protected_error(handle));
    }
    let since_ms = a.since_value().map(args::since_ms);
    let newer = |row: &Status| {
        since_ms.is_none_or(|ms| {
            let t = row
                .created_timestamp
                .as_ref()
                .and_then(serde_json::Number::as_f64);
            args::is_newer(t, ms)
        })
    };
    let mut primed = Some(first_page);
    let mut fetch = |c: &str| -> Result<ListPage<Status>, XError> {
        let primed_page = if c == first_cursor {
            primed.take()
        } else {
            None
        };
        let mut page = match primed_page {
            Some(p) => p?,
            None => check_account_list(f, &page_path(&base, c, extra_for(c)), handle, authors)?,
        };
        // Newest first: past the first own post at or before `since`,
        // every post is older. That page is the last one read.
        if since_ms.is_some()
            && page
                .items
                .iter()
                .any(|r| is_own_post(r, handle) && r.created_timestamp.is_some() && !newer(r))
        {
            page.bottom = None;
        }
        Ok(page)
    };
    let replies = a.with_replies || a.feed != ProfileFeed::Posts;
    let keep = |row: &Status| {
        let own = if replies {
            is_own_post(row, handle)
        } else {
            is_original_of(row, handle)
        };
        own && newer(row)
    };
    let mut walk = walk_pages(
        &mut fetch,
        &keep,
        start,
        args.page,
        args.limit,
        PROFILE_PAGE_BUDGET,
    )?;
    let posts: Vec<Status> = std::mem::take(&mut walk.items)
        .into_iter()
        .map(|mut p| {
            p.normalize(0);
            p.fill_url(None);
            super::post::lean_status_row(&mut p, args.full);
            p
        })
        .collect();
    walk.items = posts;
    let posts = &walk.items;
    let about = match about {
        Some(Ok(about)) => about,
        Some(Err(e)) => {
            walk.notes
                .push(format!("The account's About data could not be loaded: {e}"));
            None
        }
        None => None,
    };
    let since_shown = a.since.as_deref().map(since_words);
    let section = match (a.feed, a.with_replies) {
        (ProfileFeed::Media, _) => "Latest posts with media",
        (ProfileFeed::Articles, _) => "Articles",
        (ProfileFeed::Posts, true) => "Latest posts and replies",
        (ProfileFeed::Posts, false) => "Latest posts",
    };
    let section = match &since_shown {
        Some(w) => format!("{section} since {w}"),
        None => section.to_string(),
    };
    let empty = match (&since_shown, a.feed) {
        (Some(w), _) if args.cursor.is_none() && args.page == 1 => {
            format!("No new posts since {w}.")
        }
        (_, ProfileFeed::Posts) if !a.with_replies => "No original posts on this page.".into(),
        (_, ProfileFeed::Articles) => "No articles on this page.".into(),
        _ => "No posts on this page.".into(),
    };
    let next_cursor = walk
        .next
        .as_ref()
        .map(|p| cursor::encode(&run.settings.cursor_key, CursorKind::Profile, &scope, p));
    // A bio longer than a quarter of the budget is cut in the text (the
    // posts and the continuation still fit); `structuredContent` keeps it.
    // Written once, lean; each build below copies the bytes. The Markdown
    // still links the bio with what lean leaves out.
    let full_only = user.take_full_only(args.full);
    let profile_json = Structured::written(&user);
    user.put_back(full_only);
    // Copied only then: the usual bio is shown as it is.
    let bio_cap = run.max_chars() / 4;
    let cut_user;
    let shown_user = match user.description.as_deref() {
        Some(d) if !super::budget::within_budget(d, bio_cap) => {
            let whole = d.chars().count();
            let keep = super::budget::prefix_within(d, bio_cap);
            let mut u = user.clone();
            u.description = Some(format!(
                "{} … (bio cut: {keep} of its {whole} characters are shown; it alone exceeds the result budget)",
                super::budget::cut_text(d, keep)
            ));
            cut_user = u;
            &cut_user
        }
        _ => &user,
    };
    // A result cut before post k continues at post k.
    let cursor_at = |k: usize| {
        cursor::encode(
            &run.settings.cursor_key,
            CursorKind::Profile,
            &scope,
            &walk.cut_at(k),
        )
    };
    let path = match a.feed {
        ProfileFeed::Posts => format!("/{handle}"),
        ProfileFeed::Media => format!("/{handle}/media"),
        ProfileFeed::Articles => format!("/{handle}/articles"),
    };
    let mut link_params = Vec::new();
    if a.with_replies {
        link_params.push(("with_replies", "true".to_string()));
    }
    if let Some(s) = &a.since {
        link_params.push(("since", s.clone()));
    }
    let view = ProfileView {
        section: &section,
        empty: &empty,
        about: about.as_ref(),
    };
    let (text, structured) = fit_rows(
        run,
        posts.len(),
        &walk.notes,
        next_cursor,
        &cursor_at,
        &mut |k, next, notes| {
            let cont = continuation(
                run.settings.link(&path),
                args,
                link_params.clone(),
                next,
                k < posts.len(),
            );
            let markdown = profile_markdown_with(
                shown_user,
                &posts[..k],
                args.full,
                notes,
                cont.as_ref(),
                &view,
            );
            let mut m = base_structured("profile", args);
            m.insert("handle", json!(handle));
            if a.feed != ProfileFeed::Posts {
                m.insert("feed", json!(a.feed.as_str()));
            }
            if a.with_replies {
                m.insert("with_replies", json!(true));
            }
            if let Some(s) = &a.since {
                m.insert("since", json!(s));
            }
            m.insert_bytes("profile", profile_json.clone());
            if let Some(about) = &about {
                m.insert("about", json!(about));
            }
            m.insert_written("posts", &posts[..k]);
            if let Some(c) = next {
                m.insert("next_cursor", json!(c));
            }
            if !notes.is_empty() {
                m.insert("warnings", json!(notes));
            }
            (markdown, m)
        },
    );
    Ok(BrowseResult { text, structured })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn originals_only() {
        let a = |extra: Value| {
            let mut v = json!({"type":"status","id":"1","author":{"screen_name":"Demo"}});
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            serde_json::from_str::<Status>(&v.to_string()).unwrap()
        };
        assert!(is_original_of(&a(json!({})), "demo"));
        assert!(is_original_of(
            &a(json!({"replying_to": null, "reposted_by": null})),
            "demo"
        ));
        assert!(!is_original_of(
            &a(json!({"replying_to": {"status":"2"}})),
            "demo"
        ));
        assert!(!is_original_of(
            &a(json!({"replying_to_status": ["2"]})),
            "demo"
        ));
        assert!(!is_original_of(
            &a(json!({"reposted_by": {"screen_name":"demo"}})),
            "demo"
        ));
        assert!(!is_original_of(&a(json!({})), "other"));
        assert!(!is_original_of(
            &serde_json::from_str::<Status>(
                r#"{"type":"tombstone","author":{"screen_name":"demo"}}"#
            )
            .unwrap(),
            "demo"
        ));
    }
}
