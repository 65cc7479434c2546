//! The server `instructions`, built at compile time from every tool's
//! name and summary in the registry's `SPECS`.

use super::{Tool, SPECS};

/// Length of the server `instructions`.
const INSTRUCTIONS_LEN: usize = {
    let mut n = INSTRUCTIONS_HEAD.len() + INSTRUCTIONS_TAIL.len();
    let mut i = 0;
    while i < Tool::COUNT {
        // "name (summary), " or "name (summary). "
        n += SPECS[i].name.len() + SPECS[i].summary.len() + 5;
        i += 1;
    }
    n
};

const INSTRUCTIONS_HEAD: &str =
    "Read-only access to public X (Twitter) content, rendered as Markdown. Tools: ";
const INSTRUCTIONS_TAIL: &str = "Every result carries Markdown text plus structuredContent; list tools page with next_cursor. \
Upstream problems (rate limits, missing or protected content) come back as results with isError: true. \
resources/list returns the full service contract.";

const fn put(out: &mut [u8; INSTRUCTIONS_LEN], at: usize, s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        out[at + i] = b[i];
        i += 1;
    }
    at + b.len()
}

const INSTRUCTIONS_BYTES: [u8; INSTRUCTIONS_LEN] = {
    let mut out = [0u8; INSTRUCTIONS_LEN];
    let mut at = put(&mut out, 0, INSTRUCTIONS_HEAD);
    let mut i = 0;
    while i < Tool::COUNT {
        at = put(&mut out, at, SPECS[i].name);
        at = put(&mut out, at, " (");
        at = put(&mut out, at, SPECS[i].summary);
        at = put(
            &mut out,
            at,
            if i + 1 == Tool::COUNT { "). " } else { "), " },
        );
        i += 1;
    }
    put(&mut out, at, INSTRUCTIONS_TAIL);
    out
};

/// `instructions` in `initialize` and `server/discover`, with the tool list
/// built from [`SPECS`] at compile time.
pub const INSTRUCTIONS: &str = match std::str::from_utf8(&INSTRUCTIONS_BYTES) {
    Ok(s) => s,
    Err(_) => panic!("instructions are not UTF-8"),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_list_every_tool() {
        assert_eq!(
            INSTRUCTIONS,
            "Read-only access to public X (Twitter) content, rendered as Markdown. \
Tools: x_md_get_post (one post, optionally with its thread and quoted post), \
x_md_get_profile (one account, its posts, media or articles), \
x_md_search_posts (search), x_md_get_followers (accounts following an account), \
x_md_get_following (accounts an account follows), x_md_get_quotes (posts quoting a post), \
x_md_get_reposts (accounts that reposted a post), x_md_get_trends (what is trending). \
Every result carries Markdown text plus structuredContent; list tools page with next_cursor. \
Upstream problems (rate limits, missing or protected content) come back as results with isError: true. \
resources/list returns the full service contract."
        );
    }
}
