//! The shape of the crate, kept (issue 28 item 5): `src/x/` in layers and no
//! import circle anywhere in `src/`.
//!
//! The test reads every `.rs` file under `src/`, lexes it (comments, string,
//! byte, raw-string and char literals skipped), and collects every module
//! path the file names: its `use` trees (grouped `use crate::{a, b::{c}}`
//! included) and inline paths such as `crate::x::registry::Call`,
//! `super::escape::inline` or `self::cursor::…`, and, in the 2018 manner, a
//! path that starts with the name of a child module. Each path is resolved
//! against the file's module (`super::` and `self::` relative to it, inline
//! `mod tests { … }` blocks and `#[path]` attributes followed) and then to
//! the file that defines the longest prefix of it. Files are the nodes of
//! the graph, a named path the edge.
//!
//! Two checks, each printing what it found:
//! - `layers_of_x_are_kept`: every edge between layers of `src/x/` is one the
//!   table [`X_LAYERS`] allows;
//! - `no_import_cycle_in_src`: the graph has no cycle (Tarjan's strongly
//!   connected components; any component of more than one file is a cycle).
//!   A submodule naming its own ancestors (`super::Conn` from
//!   `server/conn/closing.rs`) is a part using its whole, not an edge of
//!   this check ([`is_part_of`]); every other edge is, `#[cfg(test)]` code
//!   included.
//!
//! `XMD_ARCH_DUMP=1 cargo test --test architecture -- --nocapture` prints
//! every edge.
//!
//! A hand-written lexer (`architecture/paths.rs`) rather than `syn`: the
//! only syntax needed is paths and `use` trees, which it reads exactly for
//! this crate (no macro builds a module path; the lexer's own tests are at
//! the end of this file); the resolution of `super::`, inline modules and
//! `#[path]` is needed either way, as is the reading of path strings in
//! attributes; and `syn` with its `full` and `visit` features (the tree
//! has it with neither) would be one more crate to compile for every test
//! build on the shared two cores.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

#[path = "architecture/paths.rs"]
mod paths;

#[path = "architecture/modules.rs"]
mod modules;

use modules::{longest_module, module_of, resolve, rs_files, split, src_dir};
use paths::{lex, names};

/// The layers of `src/x/`, written once. A file's layer is the first entry
/// whose prefix its module path starts with (more specific prefixes first).
/// Module paths outside `src/x/` are not in a layer of `x`; what `x` may
/// name outside itself is [`X_MAY_NAME_OUTSIDE`].
const X_LAYER_OF: &[(&str, &str)] = &[
    // Markdown escaping of text and the link finder it shares with the
    // renderer: error messages and the model's shape errors quote upstream
    // text with it.
    ("crate::x::escape", "escape"),
    ("crate::x::linkify", "escape"),
    ("crate::x::url", "url"),
    ("crate::x::error", "error"),
    ("crate::x::model", "model"),
    ("crate::x::upstream", "upstream"),
    ("crate::x::answer", "upstream"),
    ("crate::x::retry_after", "upstream"),
    ("crate::x::cache", "upstream"),
    ("crate::x::cacheable", "upstream"),
    ("crate::x::fetcher", "upstream"),
    ("crate::x::memory", "upstream"),
    ("crate::x::resolve", "upstream"),
    ("crate::x::side", "upstream"),
    ("crate::x::syndication", "upstream"),
    ("crate::x::typed_read", "upstream"),
    // Issue 28: the restartable runs' state, and the event loops' upstream
    // client (wire, connections, the per-loop driver).
    ("crate::x::restart", "upstream"),
    ("crate::x::loopio", "upstream"),
    ("crate::x::render", "render"),
    // The tools: the registry, arguments, runs, cursors, the text budget
    // (`budget.rs` takes the typed `registry::Call`), and each tool. The
    // x module's own mod.rs only declares the others.
    ("crate::x", "tools"),
];

/// Which layer may name which (besides itself). `escape` and `url` are
/// leaves, `error` stands on `escape` (its messages quote upstream text
/// escaped); `model` on those three; `upstream` and `render` on `model`
/// and the leaves, never on each other; the tools on all.
const X_LAYERS: &[(&str, &[&str])] = &[
    ("escape", &[]),
    ("url", &[]),
    ("error", &["escape"]),
    ("model", &["escape", "url", "error"]),
    ("upstream", &["escape", "url", "error", "model"]),
    ("render", &["escape", "url", "error", "model"]),
    (
        "tools",
        &["escape", "url", "error", "model", "upstream", "render"],
    ),
];

/// Crate-level modules outside `x` that a layer of `x` may name: for every
/// layer the leaves of plain data helpers (text, JSON writing, dates, heap
/// accounting); for the tools also the configuration's defaults. `x`
/// names nothing of HTTP serving, MCP framing or metrics.
const X_MAY_NAME_OUTSIDE: &[(&str, &[&str])] = &[
    (
        "*",
        &[
            "crate::text",
            "crate::json",
            "crate::calendar",
            "crate::heap",
        ],
    ),
    ("tools", &["crate::config"]),
];

// ---------------------------------------------------------------------------
// The graph

struct Crate {
    /// Module path (e.g. `crate::x::render::post`) of each file, by file.
    files: BTreeMap<PathBuf, String>,
    /// Edges between files' modules, each with one path that makes it.
    edges: BTreeMap<(String, String), String>,
}

fn load() -> Crate {
    let src = src_dir();
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let mut files: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut lexed = BTreeMap::new();
    for p in &paths {
        let rel = p.strip_prefix(&src).unwrap().to_path_buf();
        files.insert(rel.clone(), module_of(&rel));
        lexed.insert(rel, lex(&std::fs::read_to_string(p).unwrap()));
    }
    // `#[path = "f.rs"] mod name;` puts f.rs (beside the declaring file) at
    // the declaring module's `name`.
    for (rel, toks) in &lexed {
        let module = files[rel].clone();
        let (_, path_mods) = names(toks, &split(&module));
        for (name, p) in path_mods {
            let target = rel.parent().unwrap().join(p);
            if let Some(m) = files.get_mut(&target) {
                *m = format!("{module}::{name}");
            }
        }
    }
    let modules: BTreeSet<String> = files.values().cloned().collect();
    let mut edges = BTreeMap::new();
    for (rel, toks) in &lexed {
        let module = files[rel].clone();
        let (named, _) = names(toks, &split(&module));
        for n in named {
            let Some(abs) = resolve(&n.path, &n.from, &module, &modules) else {
                continue;
            };
            let Some(target) = longest_module(&abs, &modules) else {
                continue;
            };
            if target != module {
                edges
                    .entry((module.clone(), target))
                    .or_insert_with(|| n.path.join("::"));
            }
        }
    }
    Crate { files, edges }
}

fn is_within(module: &str, prefix: &str) -> bool {
    module == prefix || module.starts_with(&format!("{prefix}::"))
}

fn x_layer(module: &str) -> Option<&'static str> {
    X_LAYER_OF
        .iter()
        .find(|(p, _)| is_within(module, p))
        .map(|(_, l)| *l)
}

/// The edges of `edges` the layer tables forbid, one line each.
fn forbidden(edges: &BTreeMap<(String, String), String>) -> Vec<String> {
    let mut bad = Vec::new();
    for ((from, to), via) in edges {
        let Some(lf) = x_layer(from) else { continue };
        let ok = match x_layer(to) {
            Some(lt) if lt == lf => true,
            Some(lt) => X_LAYERS
                .iter()
                .find(|(l, _)| *l == lf)
                .is_some_and(|(_, may)| may.contains(&lt)),
            None => X_MAY_NAME_OUTSIDE
                .iter()
                .filter(|(l, _)| *l == "*" || *l == lf)
                .any(|(_, may)| may.iter().any(|p| is_within(to, p))),
        };
        if !ok {
            bad.push(format!(
                "{from} ({lf}) -> {to} ({}) via `{via}`",
                x_layer(to).unwrap_or("outside x")
            ));
        }
    }
    bad
}

/// Tarjan's strongly connected components of more than one node, each
/// sorted, plus any node with an edge to itself (never made here).
fn cycles(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys().filter(|(a, b)| !is_part_of(a, b)) {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    let nodes: Vec<&str> = adj.keys().copied().collect();
    let ix: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let n = nodes.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut out = Vec::new();
    // Iterative Tarjan: (node, next child position).
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = call.last_mut() {
            let succ = &adj[nodes[v]];
            if *k < succ.len() {
                let w = ix[succ[*k]];
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().unwrap();
                        on_stack[w] = false;
                        comp.push(nodes[w].to_string());
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 {
                        comp.sort();
                        out.push(comp);
                    }
                }
            }
        }
    }
    out
}

/// A submodule is a part of the module that declares it: a part naming
/// the whole's items (`super::Conn` in `server/conn/closing.rs`) is not an
/// import between modules, while the whole naming its parts is. So an edge
/// from a module to one of its ancestors is no edge of the cycle check.
fn is_part_of(from: &str, to: &str) -> bool {
    from.starts_with(&format!("{to}::"))
}

/// The edges inside one strongly connected component, for the message.
fn edges_within(comp: &[String], edges: &BTreeMap<(String, String), String>) -> Vec<String> {
    edges
        .iter()
        .filter(|((a, b), _)| comp.contains(a) && comp.contains(b) && !is_part_of(a, b))
        .map(|((a, b), via)| format!("  {a} -> {b} via `{via}`"))
        .collect()
}

fn dump(c: &Crate) {
    if std::env::var_os("XMD_ARCH_DUMP").is_some() {
        for ((a, b), via) in &c.edges {
            println!("{a} -> {b} via `{via}`");
        }
    }
}

#[test]
fn layers_of_x_are_kept() {
    let c = load();
    dump(&c);
    // Every file of src/x/ is in a layer (the table's last row is `crate::x`).
    for m in c.files.values().filter(|m| is_within(m, "crate::x")) {
        assert!(x_layer(m).is_some(), "{m} is in no layer");
    }
    let bad = forbidden(&c.edges);
    assert!(
        bad.is_empty(),
        "{} import(s) of src/x/ break the layers (tests/architecture.rs X_LAYERS):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn no_import_cycle_in_src() {
    let c = load();
    let found = cycles(&c.edges);
    let msg: Vec<String> = found
        .iter()
        .map(|comp| {
            format!(
                "cycle among {} files: {}\n{}",
                comp.len(),
                comp.join(", "),
                edges_within(comp, &c.edges).join("\n")
            )
        })
        .collect();
    assert!(found.is_empty(), "{}", msg.join("\n\n"));
}

// ---------------------------------------------------------------------------
// The reader's own checks: what it must see and what it must not.

fn paths_named(src: &str, module: &str) -> Vec<String> {
    let (named, _) = names(&lex(src), &split(module));
    named.into_iter().map(|n| n.path.join("::")).collect()
}

#[test]
fn grouped_use_trees_give_every_path() {
    let got = paths_named(
        "pub(crate) use crate::{a, b::{self, c, d as e}, f::*};\nuse ::std::fmt;",
        "crate::x",
    );
    assert_eq!(
        got,
        [
            "crate::a",
            "crate::b::self",
            "crate::b::c",
            "crate::b::d",
            "crate::f",
            "std::fmt"
        ]
    );
}

#[test]
fn comments_strings_and_chars_hide_no_path_and_invent_none() {
    let src = r####"
        // crate::gone::line
        /* crate::gone::block /* nested crate::gone::inner */ still */
        /// crate::gone::doc
        const A: &str = "crate::gone::string \" crate::gone::escaped";
        const B: &str = r#"crate::gone::raw " crate::gone::raw_quote"#;
        const C: &[u8] = b"crate::gone::bytes";
        const D: char = '"';
        const E: u8 = b'\'';
        fn f<'a>(x: &'a str) -> crate::kept::one<'a> { super::kept::two(x) }
        #[serde(deserialize_with = "super::kept::three", rename = "a::b c")]
        struct S;
    "####;
    let got = paths_named(src, "crate::x::y");
    assert_eq!(
        got,
        ["crate::kept::one", "super::kept::two", "super::kept::three"]
    );
}

#[test]
fn super_and_self_resolve_from_the_module_a_path_stands_in() {
    let modules: BTreeSet<String> = [
        "crate",
        "crate::x",
        "crate::x::render",
        "crate::x::render::post",
        "crate::x::render::escape",
        "crate::x::model",
    ]
    .map(String::from)
    .into();
    let src = "use super::escape::a; mod tests { use super::super::super::model::B; fn f() { self::g(); } }";
    let (named, _) = names(&lex(src), &split("crate::x::render::post"));
    let got: Vec<Option<String>> = named
        .iter()
        .map(|n| {
            let abs = resolve(&n.path, &n.from, "crate::x::render::post", &modules)?;
            longest_module(&abs, &modules)
        })
        .collect();
    assert_eq!(
        got,
        [
            Some("crate::x::render::escape".to_string()),
            Some("crate::x::model".to_string()),
            Some("crate::x::render::post".to_string()),
        ]
    );
}

#[test]
fn tarjan_finds_a_cycle_and_no_false_one() {
    let edge = |a: &str, b: &str| ((a.to_string(), b.to_string()), String::new());
    let dag: BTreeMap<_, _> = [edge("a", "b"), edge("b", "c"), edge("a", "c")].into();
    assert!(cycles(&dag).is_empty());
    let cyc: BTreeMap<_, _> = [
        edge("a", "b"),
        edge("b", "c"),
        edge("c", "a"),
        edge("c", "d"),
    ]
    .into();
    assert_eq!(cycles(&cyc), [["a", "b", "c"]]);
    // A part naming its whole is no edge of the check.
    let parts: BTreeMap<_, _> = [edge("m", "m::p"), edge("m::p", "m")].into();
    assert!(cycles(&parts).is_empty());
}
