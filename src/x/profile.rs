//! `x_md_get_profile` (upstream.md §2.2, §2.4, §2.5): the profile and one
//! page of the account's latest original posts, fetched concurrently so the
//! first page costs one upstream round trip.

use serde_json::json;

use super::browse::{
    base_structured, check_account_list, continuation, cursor_error, fetch_profile, page_path,
    protected_error, walk_pages, BrowseArgs, BrowseResult, ListPage,
};
use super::budget::{fit_rows, Run};
use super::cursor::{self, CursorKind};
use super::error::{code, XError};
use super::fetcher::Fetcher;
use super::model::parse::Authors;
use super::model::status::Status;
use super::model::user::User;
use super::render::browse::profile_markdown;
use super::structured::Structured;
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

/// Runs `x_md_get_profile`.
pub fn profile(f: &Fetcher, args: &BrowseArgs, run: &Run) -> Result<BrowseResult, XError> {
    let handle = args.handle.as_str();
    let scope = cursor::handle_scope(handle);
    let start = match &args.cursor {
        Some(c) => Some(
            cursor::decode(&run.settings.cursor_key, c, CursorKind::Profile, &scope)
                .map_err(cursor_error)?,
        ),
        None => None,
    };
    let base = format!("/2/profile/{handle}/statuses");
    let extra = "&with_replies=false";
    let first_cursor = start
        .as_ref()
        .map(|p| p.upstream.clone())
        .unwrap_or_default();
    let first_path = page_path(&base, &first_cursor, extra);
    // The profile and the first timeline page, concurrently: the profile
    // on a side thread, the page here.
    let owned = handle.to_string();
    let side = f.beside(move |up: &dyn Upstream| fetch_profile(up, &owned));
    let authors = Authors::for_rows(args.full);
    let first_page = check_account_list(f, &first_path, handle, authors);
    let user = side.join().unwrap_or_else(|| {
        Err(XError::new(
            500,
            code::UPSTREAM_ERROR,
            "The profile request failed.",
        ))
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
    let mut primed = Some(first_page);
    let mut fetch = |c: &str| -> Result<ListPage<Status>, XError> {
        if c == first_cursor {
            if let Some(p) = primed.take() {
                return p;
            }
        }
        check_account_list(f, &page_path(&base, c, extra), handle, authors)
    };
    let keep = |row: &Status| is_original_of(row, handle);
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
    let path = format!("/{handle}");
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
                vec![],
                next,
                k < posts.len(),
            );
            let markdown =
                profile_markdown(shown_user, &posts[..k], args.full, notes, cont.as_ref());
            let mut m = base_structured("profile", args);
            m.insert("handle", json!(handle));
            m.insert_bytes("profile", profile_json.clone());
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
