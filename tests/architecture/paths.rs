//! The reader of `tests/architecture.rs`: a lexer for Rust source that
//! skips comments and string, byte, raw-string and char literals, and the
//! module paths a file names (its `use` trees, inline paths, path strings
//! in attributes), each with the inline module it stands in.

// ---------------------------------------------------------------------------
// Lexer

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
    Str(String),
}

pub fn lex(src: &str) -> Vec<Tok> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| b.get(i).copied().unwrap_or('\0');
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0usize;
            loop {
                if i >= b.len() {
                    break;
                }
                if b[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            let (s, n) = quoted(&b, i);
            out.push(Tok::Str(s));
            i = n;
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{1F600}', '\'') or a lifetime.
            if at(i + 1) == '\\' {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1; // a lifetime: its name lexes as an identifier
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
            if raw_prefix && (at(i) == '"' || (at(i) == '#' && matches!(at(i + 1), '"' | '#'))) {
                // r"…", r#"…"#, br##"…"##
                let mut hashes = 0;
                while at(i) == '#' {
                    hashes += 1;
                    i += 1;
                }
                i += 1; // the opening quote
                let s0 = i;
                loop {
                    if i >= b.len() {
                        break;
                    }
                    if b[i] == '"' && (0..hashes).all(|k| at(i + 1 + k) == '#') {
                        break;
                    }
                    i += 1;
                }
                out.push(Tok::Str(b[s0..i.min(b.len())].iter().collect()));
                i += 1 + hashes;
            } else if word == "r" && at(i) == '#' {
                // a raw identifier r#type
                i += 1;
                let s0 = i;
                while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
                out.push(Tok::Ident(b[s0..i].iter().collect()));
            } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                let (s, n) = quoted(&b, i);
                out.push(Tok::Str(s));
                i = n;
            } else if word == "b" && at(i) == '\'' {
                // b'x', b'\n'
                i += 1;
                if at(i + 1) == '\\' {
                    i += 2;
                    while i < b.len() && b[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    i += 3;
                }
            } else {
                out.push(Tok::Ident(word));
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Tok::Sep);
            i += 2;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// A "…" literal starting at `i`: its text and the index after it.
fn quoted(b: &[char], mut i: usize) -> (String, usize) {
    i += 1;
    let mut s = String::new();
    while i < b.len() && b[i] != '"' {
        if b[i] == '\\' {
            i += 1;
        }
        if i < b.len() {
            s.push(b[i]);
        }
        i += 1;
    }
    (s, i + 1)
}

// ---------------------------------------------------------------------------
// Paths a file names

/// Reads a `use` tree starting at `toks[*i]`, pushing every full path it
/// names (with `prefix` in front) to `out`.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    if toks.get(*i) == Some(&Tok::Sep) {
        *i += 1; // a leading `::`
    }
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                *i += 1;
                if toks.get(*i) == Some(&Tok::Sep) {
                    *i += 1;
                } else {
                    break;
                }
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        None => return,
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        _ => {
                            let before = *i;
                            use_tree(toks, i, path.clone(), out);
                            if *i == before {
                                *i += 1; // unreadable: never loop
                            }
                        }
                    }
                }
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                break;
            }
            _ => break,
        }
    }
    if toks.get(*i) == Some(&Tok::Ident("as".into())) {
        *i += 2;
    }
    out.push(path);
}

/// One named path and the module it was named from.
#[derive(Debug)]
pub struct Named {
    pub path: Vec<String>,
    pub from: Vec<String>,
}

/// Everything a file names, each with the (inline) module it stands in, and
/// the `#[path = "…"] mod name;` declarations it makes.
pub fn names(toks: &[Tok], module: &[String]) -> (Vec<Named>, Vec<(String, String)>) {
    let mut named = Vec::new();
    let mut path_mods = Vec::new();
    // The inline modules open at each brace depth.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_path: Option<String> = None;
    // Inside an attribute (`#[…]`, `#![…]`): the bracket depth it closes at.
    // A string there that is a path of two or more segments is a path the
    // file names (`#[serde(deserialize_with = "super::parse::raw")]`).
    let mut attr_until: Option<usize> = None;
    let mut brackets = 0usize;
    let cur = |inline: &Vec<(usize, String)>| {
        let mut m = module.to_vec();
        m.extend(inline.iter().map(|(_, n)| n.clone()));
        m
    };
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('#')
                if toks.get(i + 1) == Some(&Tok::Punct('['))
                    && toks.get(i + 2) == Some(&Tok::Ident("path".into()))
                    && toks.get(i + 3) == Some(&Tok::Punct('=')) =>
            {
                if let Some(Tok::Str(p)) = toks.get(i + 4) {
                    pending_path = Some(p.clone());
                }
                i += 6; // `#[path = "…"]`
            }
            Tok::Ident(w) if w == "mod" => {
                if let Some(Tok::Ident(name)) = toks.get(i + 1) {
                    match toks.get(i + 2) {
                        Some(Tok::Punct('{')) => {
                            depth += 1;
                            inline.push((depth, name.clone()));
                            i += 3;
                            pending_path = None;
                            continue;
                        }
                        Some(Tok::Punct(';')) => {
                            if let Some(p) = pending_path.take() {
                                path_mods.push((name.clone(), p));
                            }
                        }
                        _ => {}
                    }
                }
                i += 2;
            }
            Tok::Ident(w) if w == "use" => {
                i += 1;
                let mut paths = Vec::new();
                use_tree(toks, &mut i, Vec::new(), &mut paths);
                let from = cur(&inline);
                named.extend(paths.into_iter().map(|path| Named {
                    path,
                    from: from.clone(),
                }));
            }
            Tok::Ident(first)
                if toks.get(i + 1) == Some(&Tok::Sep)
                    && (i == 0 || toks[i - 1] != Tok::Sep)
                    && first != "Self" =>
            {
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Tok::Sep) {
                    if let Some(Tok::Ident(s)) = toks.get(j + 1) {
                        path.push(s.clone());
                        j += 2;
                    } else {
                        break;
                    }
                }
                named.push(Named {
                    path,
                    from: cur(&inline),
                });
                i = j;
            }
            Tok::Punct('#')
                if toks.get(i + 1) == Some(&Tok::Punct('['))
                    || (toks.get(i + 1) == Some(&Tok::Punct('!'))
                        && toks.get(i + 2) == Some(&Tok::Punct('['))) =>
            {
                attr_until.get_or_insert(brackets);
                i += 1;
            }
            Tok::Punct('[') => {
                brackets += 1;
                i += 1;
            }
            Tok::Punct(']') => {
                brackets = brackets.saturating_sub(1);
                if attr_until == Some(brackets) {
                    attr_until = None;
                }
                i += 1;
            }
            Tok::Str(p) if attr_until.is_some() && is_path_text(p) => {
                named.push(Named {
                    path: p.split("::").map(str::to_string).collect(),
                    from: cur(&inline),
                });
                i += 1;
            }
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if inline.last().map(|(d, _)| *d) == Some(depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    (named, path_mods)
}

/// `a::b` or longer, of identifiers only.
fn is_path_text(p: &str) -> bool {
    let segs: Vec<&str> = p.split("::").collect();
    segs.len() >= 2
        && segs.iter().all(|s| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}
