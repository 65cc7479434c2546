//! Where `tests/architecture.rs` and `tests/tool_cost.rs` find the files
//! of `src/`, the module each file is, and the module a named path reaches.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

pub fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module of a file by where it stands: src/lib.rs is `crate`,
/// src/x/mod.rs `crate::x`, src/x/render/post.rs `crate::x::render::post`.
/// The binaries (src/main.rs, src/bin/*) are crates of their own, named
/// `main` and `bin::NAME` here; they reach the library as `xmd::`.
pub fn module_of(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.as_slice() {
        [one] if one == "lib" => "crate".into(),
        [one] if one == "main" => "main".into(),
        [first, rest @ ..] if first == "bin" => format!("bin::{}", rest.join("::")),
        _ => {
            let mut m = vec!["crate".to_string()];
            m.extend(parts.iter().cloned());
            if m.last().is_some_and(|l| l == "mod") {
                m.pop();
            }
            m.join("::")
        }
    }
}

pub fn split(m: &str) -> Vec<String> {
    m.split("::").map(str::to_string).collect()
}

/// The absolute path (`crate::…`) a path names from module `from`, or None
/// for a path into another crate (std, serde, …).
pub fn resolve(
    path: &[String],
    from: &[String],
    file_module: &str,
    modules: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let in_bin = !file_module.starts_with("crate");
    let mut abs: Vec<String> = match first.as_str() {
        "crate" if !in_bin => path.to_vec(),
        "xmd" if in_bin => {
            let mut v = vec!["crate".to_string()];
            v.extend(path[1..].iter().cloned());
            v
        }
        _ if in_bin => return None,
        "self" => {
            let mut v = from.to_vec();
            v.extend(path[1..].iter().cloned());
            v
        }
        "super" => {
            let mut v = from.to_vec();
            let mut k = 0;
            while path.get(k).is_some_and(|s| s == "super") {
                v.pop();
                k += 1;
            }
            v.extend(path[k..].iter().cloned());
            v
        }
        _ => {
            // A 2018 relative path through a child module of `from`.
            let child = format!("{}::{first}", from.join("::"));
            if modules
                .iter()
                .any(|m| *m == child || m.starts_with(&format!("{child}::")))
            {
                let mut v = from.to_vec();
                v.extend(path.iter().cloned());
                v
            } else {
                return None;
            }
        }
    };
    // `use a::{self, b}` names `a::self`.
    let head = abs.remove(0);
    abs.retain(|s| s != "self");
    abs.insert(0, head);
    Some(abs)
}

pub fn longest_module(abs: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=abs.len())
        .rev()
        .map(|n| abs[..n].join("::"))
        .find(|m| modules.contains(m))
}
