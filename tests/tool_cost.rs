//! What a tool costs in `src/` (issue 31: "the new tool needs at most 4
//! files in `src/` besides tests, docs and fixtures"): the tool's own file,
//! `registry.rs`, and at most two more (today `x/mod.rs`, which declares
//! the module, and `x/tools.rs`, which dispatches its `Call` to its run).
//!
//! For every registered tool ([`Tool::ALL`]) the test counts the files of
//! `src/` that name it, reading code only (the lexer of
//! `tests/architecture.rs`: comments and `#[cfg(test)]` items skipped, and
//! test-only files, `tests.rs` and `*_tests.rs`, left out). A file names a
//! tool when it has
//! - the tool's variant as an identifier (`GetTrends`: `Tool::GetTrends`,
//!   `Call::GetTrends`);
//! - a path into the tool's run module (the module `tools.rs` dispatches the
//!   tool's `Call` to, when no other tool's call goes there: `trends` for
//!   `x_md_get_trends`), or its `mod` declaration;
//! - a property table named after that module (`TRENDS_PROPS`,
//!   `TRENDS_…_PROPS`), wherever it is kept;
//! - a string literal equal to the first literal segment of one of the
//!   tool's routes (`"explore"` of `/explore/tabs/trending`: a hand-kept
//!   list of reserved names), unless it is reserved whatever the tools
//!   ([`RESERVED_WITHOUT_TOOLS`]: `i` of `/i/status/{id}`).
//!
//! Before the registry derived `MOST_ARGUMENTS` and the reserved first
//! segments, `x_md_get_trends` was named in 6 files (`args/mod.rs` for
//! `TRENDS_PROPS` in `PROP_TABLES`, `url.rs` for `"explore"`), which this
//! test refuses. The tools older than the promise (their argument structs
//! and parsers live in `args/`, their routes' names in shared helpers) are
//! held to the files they use today, exactly, so their cost cannot grow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use xmd::x::registry::Tool;

#[allow(dead_code)]
#[path = "architecture/paths.rs"]
mod paths;

#[allow(dead_code)]
#[path = "architecture/modules.rs"]
mod modules;

use modules::{longest_module, module_of, resolve, rs_files, split, src_dir};
use paths::{lex, names, Tok};

/// Most files of `src/` that may name one tool.
const MAX_FILES_PER_TOOL: usize = 4;

/// The tools that came before the promise, each with the files that name
/// it today (more is a failure, and so is fewer: then the entry shrinks).
/// `x/cursor.rs` names them in its `CursorKind` constants, `x/args/` holds
/// their argument structs and parsers; `x_md_get_post`'s rows are also
/// read by the profile and search runs.
const OLDER_TOOLS: &[(&str, &[&str])] = &[
    (
        "GetPost",
        &[
            "x/args/mod.rs",
            "x/args/typed.rs",
            "x/cursor.rs",
            "x/mod.rs",
            "x/post.rs",
            "x/profile.rs",
            "x/registry.rs",
            "x/search.rs",
            "x/tools.rs",
        ],
    ),
    (
        "GetProfile",
        &[
            "x/args/mod.rs",
            "x/args/typed.rs",
            "x/cursor.rs",
            "x/mod.rs",
            "x/profile.rs",
            "x/registry.rs",
            "x/tools.rs",
        ],
    ),
    (
        "SearchPosts",
        &[
            "x/args/mod.rs",
            "x/args/typed.rs",
            "x/cursor.rs",
            "x/mod.rs",
            "x/registry.rs",
            "x/search.rs",
            "x/status_lists.rs",
            "x/tools.rs",
        ],
    ),
];

/// The first path segments reserved whatever the tools (this server's own
/// paths and X's `i`), as `url::RESERVED_NAMES` must keep them: a tool's
/// route reserves its first segment through the registry, not by an entry
/// there (which is how `x_md_get_trends` first reserved `explore`).
const RESERVED_WITHOUT_TOOLS: [&str; 4] = ["healthz", "i", "mcp", "metrics"];

/// A source file: where it is, its module, its code tokens.
struct File {
    rel: PathBuf,
    module: String,
    toks: Vec<Tok>,
}

/// `toks` without the `#[cfg(test)]` items (the attribute, any further
/// attributes, and the item up to its `;` or its closing brace).
fn without_test_items(toks: Vec<Tok>) -> Vec<Tok> {
    let is = |i: usize, t: Tok| toks.get(i) == Some(&t);
    let ident = |w: &str| Tok::Ident(w.to_string());
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let cfg_test = is(i, Tok::Punct('#'))
            && is(i + 1, Tok::Punct('['))
            && is(i + 2, ident("cfg"))
            && is(i + 3, Tok::Punct('('))
            && is(i + 4, ident("test"))
            && is(i + 5, Tok::Punct(')'))
            && is(i + 6, Tok::Punct(']'));
        if !cfg_test {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        let mut depth = 0usize;
        while i < toks.len() {
            match toks[i] {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']') => depth = depth.saturating_sub(1),
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                Tok::Punct(';') if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

fn is_test_file(rel: &std::path::Path) -> bool {
    let stem = rel.file_stem().unwrap().to_string_lossy();
    stem == "tests" || stem.ends_with("_tests")
}

fn load() -> (Vec<File>, BTreeSet<String>) {
    let src = src_dir();
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let mut files = Vec::new();
    for p in paths {
        let rel = p.strip_prefix(&src).unwrap().to_path_buf();
        if is_test_file(&rel) {
            continue;
        }
        let module = module_of(&rel);
        let toks = without_test_items(lex(&std::fs::read_to_string(&p).unwrap()));
        files.push(File { rel, module, toks });
    }
    let modules = files.iter().map(|f| f.module.clone()).collect();
    (files, modules)
}

/// Every module the file names (absolute), with the modules it declares
/// (`mod name;`).
fn named_modules(f: &File, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let (named, _) = names(&f.toks, &split(&f.module));
    let mut out: BTreeSet<String> = named
        .iter()
        .filter_map(|n| resolve(&n.path, &n.from, &f.module, modules))
        .filter_map(|abs| longest_module(&abs, modules))
        .collect();
    for w in f.toks.windows(3) {
        if let [Tok::Ident(m), Tok::Ident(name), Tok::Punct(';')] = w {
            if m == "mod" {
                out.insert(format!("{}::{name}", f.module));
            }
        }
    }
    out
}

/// The module `x/tools.rs` dispatches `Call::<variant>` to: the module of
/// the first function path after the arm's `=>`.
fn run_module(tools: &File, variant: &str, modules: &BTreeSet<String>) -> String {
    let t = &tools.toks;
    let arm = (0..t.len())
        .find(|&i| {
            t[i] == Tok::Ident("Call".into())
                && t.get(i + 1) == Some(&Tok::Sep)
                && t.get(i + 2) == Some(&Tok::Ident(variant.into()))
                && t.get(i + 3) == Some(&Tok::Punct('('))
                && t[i + 4..].iter().take(4).any(|x| *x == Tok::Punct('>'))
        })
        .unwrap_or_else(|| panic!("no `Call::{variant}(…) =>` arm in x/tools.rs"));
    let mut i = arm + 4;
    while i < t.len() {
        // A path `a::b::f(`: read its segments.
        let mut path = Vec::new();
        let mut k = i;
        while let Some(Tok::Ident(s)) = t.get(k) {
            path.push(s.clone());
            if t.get(k + 1) == Some(&Tok::Sep) {
                k += 2;
            } else {
                break;
            }
        }
        if path.len() >= 2 && t.get(k + 1) == Some(&Tok::Punct('(')) {
            // `trends::trends(…)` through `use super::trends`, or
            // `super::trends::trends(…)`: a sibling of `tools`.
            let parent = tools.module.rsplit_once("::").unwrap().0;
            let sibling = format!("{parent}::{}", path[path.len() - 2]);
            let abs = resolve(&path, &split(&tools.module), &tools.module, modules);
            return abs
                .and_then(|a| longest_module(&a, modules))
                .filter(|m| m != "crate::x" && m != &tools.module)
                .or_else(|| modules.contains(&sibling).then_some(sibling))
                .unwrap_or_else(|| panic!("{path:?} names no module of the crate"));
        }
        i += 1;
    }
    panic!("no run path after `Call::{variant}(…) =>`")
}

/// The files of `src/` that name each tool, by variant.
fn files_per_tool() -> BTreeMap<String, BTreeSet<String>> {
    let (files, modules) = load();
    let tools = files
        .iter()
        .find(|f| f.module == "crate::x::tools")
        .expect("src/x/tools.rs");
    let variants: Vec<String> = Tool::ALL.iter().map(|t| format!("{t:?}")).collect();
    let runs: Vec<String> = variants
        .iter()
        .map(|v| run_module(tools, v, &modules))
        .collect();
    let named: Vec<BTreeSet<String>> = files.iter().map(|f| named_modules(f, &modules)).collect();
    let mut out = BTreeMap::new();
    for (ti, tool) in Tool::ALL.into_iter().enumerate() {
        let variant = &variants[ti];
        // The run module counts when it is this tool's alone.
        let own = (runs.iter().filter(|r| **r == runs[ti]).count() == 1).then_some(&runs[ti]);
        let upper = own.map(|m| m.rsplit("::").next().unwrap().to_ascii_uppercase());
        let firsts: BTreeSet<&str> = tool
            .spec()
            .routes
            .iter()
            .filter_map(|r| r.template.strip_prefix('/')?.split('/').next())
            .filter(|s| !s.starts_with('{') && !RESERVED_WITHOUT_TOOLS.contains(s))
            .collect();
        let mut hits = BTreeSet::new();
        for (fi, f) in files.iter().enumerate() {
            let by_token = f.toks.iter().any(|t| match t {
                Tok::Ident(w) => {
                    w == variant
                        || upper.as_ref().is_some_and(|u| {
                            w.strip_prefix(u.as_str()).is_some_and(|rest| {
                                rest.starts_with('_') && rest.ends_with("_PROPS")
                                    || rest == "_PROPS"
                            })
                        })
                }
                Tok::Str(s) => firsts.contains(s.as_str()),
                _ => false,
            });
            let by_module = own.is_some_and(|m| {
                f.module == *m
                    || f.module.starts_with(&format!("{m}::"))
                    || named[fi].iter().any(|n| n == m)
            });
            if by_token || by_module {
                hits.insert(f.rel.to_string_lossy().replace('\\', "/"));
            }
        }
        out.insert(variant.clone(), hits);
    }
    out
}

#[test]
fn every_tool_costs_at_most_four_files_of_src() {
    let per_tool = files_per_tool();
    let mut bad = Vec::new();
    for (variant, files) in &per_tool {
        println!("{variant}: {} files: {files:?}", files.len());
        match OLDER_TOOLS.iter().find(|(v, _)| v == variant) {
            Some((_, known)) => {
                let known: BTreeSet<String> = known.iter().map(|s| s.to_string()).collect();
                if *files != known {
                    bad.push(format!(
                        "{variant} (older than the promise) is named in {files:?}, \
                         not the {known:?} it is held to"
                    ));
                }
            }
            None if files.len() > MAX_FILES_PER_TOOL => bad.push(format!(
                "{variant} is named in {} files of src/ (at most {MAX_FILES_PER_TOOL}): {files:?}",
                files.len()
            )),
            None => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The count of the tool that proved the promise, exactly: its file, its
/// registry entry, its module declaration and its dispatch arm.
#[test]
fn trends_is_named_in_its_four_files() {
    let per_tool = files_per_tool();
    let files: Vec<&str> = per_tool["GetTrends"].iter().map(String::as_str).collect();
    assert_eq!(
        files,
        ["x/mod.rs", "x/registry.rs", "x/tools.rs", "x/trends.rs"]
    );
}

#[test]
fn url_reserves_no_tool_route() {
    assert_eq!(
        xmd::x::url::RESERVED_NAMES.as_slice(),
        RESERVED_WITHOUT_TOOLS.as_slice()
    );
}

#[test]
fn test_items_are_left_out() {
    let toks = lex("fn a() {} #[cfg(test)] #[path = \"t.rs\"] mod t; b(); \
                    #[cfg(test)] mod tests { fn c() { GetTrends } } d(); \
                    #[cfg(test)] use x::{y, z}; e(); \
                    #[cfg(test)] const K: [u8; 2] = [1; 2]; f();");
    let kept: Vec<String> = without_test_items(toks)
        .into_iter()
        .filter_map(|t| match t {
            Tok::Ident(w) => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(kept, ["fn", "a", "b", "d", "e", "f"]);
}
