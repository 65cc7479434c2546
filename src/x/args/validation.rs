//! Validation of a call's `arguments` against a property table: the
//! size refusal, unknown keys with their hints, types, ranges and
//! patterns, and the integer reading JSON Schema allows.

use serde_json::{Map, Value};

use super::{parse_since, Kind, Prop, HINTS, SINCE_WHAT};

/// Refuses an `arguments` object of more than `most` keys (the registry's
/// `MOST_ARGUMENTS`, the longest property table of any tool) before any
/// key is looked at, with one short message naming `props` (the cost of a
/// refusal stays independent of how many keys were sent). Anything but an
/// object passes: [`validate`] refuses it.
///
/// # Errors
///
/// The refusal text.
pub fn refuse_oversized(args: Option<&Value>, props: &[Prop], most: usize) -> Result<(), String> {
    match args {
        Some(Value::Object(m)) if m.len() > most => Err(format!(
            "`arguments` has {} properties; this tool takes at most {}: {}",
            m.len(),
            props.len(),
            props.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        )),
        _ => Ok(()),
    }
}

/// Most unknown keys named in one refusal; the rest are counted ("and N
/// more").
///
/// Default is 10.
pub const MAX_NAMED_UNKNOWN_KEYS: usize = 10;

/// Longest echo of one unknown key, in characters. Default 40.
const MAX_KEY_ECHO_CHARS: usize = 40;

/// Checks `arguments` against a property table: object-ness, unknown
/// properties (at most [`MAX_NAMED_UNKNOWN_KEYS`] named), types, ranges,
/// patterns, then `required` (the number of keys is checked before, by
/// [`refuse_oversized`], in the registry's `Call::parse`). Every problem is reported, joined with "; ", and the
/// allowed names are listed once.
pub fn validate(
    args: Option<&Value>,
    props: &[Prop],
    required: &[&str],
) -> Result<Map<String, Value>, String> {
    let allowed: Vec<&str> = props.iter().map(|p| p.name).collect();
    let obj = match args {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            return Err(
                "`arguments` must be a JSON object, e.g. {\"handle\": \"example_user\"}".into(),
            )
        }
    };
    let obj = obj.cloned().unwrap_or_default();
    let mut problems = Vec::new();
    let unknown: Vec<&String> = obj
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        let named: Vec<String> = unknown
            .iter()
            .take(MAX_NAMED_UNKNOWN_KEYS)
            .map(|key| {
                let shown: String = key.chars().take(MAX_KEY_ECHO_CHARS).collect();
                let hint = HINTS
                    .iter()
                    .find(|(k, v)| k == key && allowed.contains(v))
                    .map(|(_, v)| format!(" (did you mean `{v}`?)"))
                    .unwrap_or_default();
                format!("`{shown}`{hint}")
            })
            .collect();
        let more = unknown.len() - named.len();
        let noun = if unknown.len() == 1 {
            "property"
        } else {
            "properties"
        };
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        problems.push(format!(
            "unknown {noun} {}{more}; allowed: {}",
            named.join(", "),
            allowed.join(", ")
        ));
    }
    for p in props {
        if let Some(v) = obj.get(p.name) {
            if let Err(m) = check(p, v) {
                problems.push(m);
            }
        }
    }
    for r in required {
        if !obj.contains_key(*r) {
            problems.push(format!("missing required property `{r}`"));
        }
    }
    if problems.is_empty() {
        Ok(obj)
    } else {
        Err(problems.join("; "))
    }
}

fn check(p: &Prop, v: &Value) -> Result<(), String> {
    let n = p.name;
    match p.kind {
        Kind::Since => parse_since(v)
            .map(|_| ())
            .ok_or_else(|| format!("`{n}` must be {SINCE_WHAT}")),
        Kind::Bool => v
            .as_bool()
            .map(|_| ())
            .ok_or_else(|| format!("`{n}` must be a boolean (true or false)")),
        Kind::Int { min, max, .. } => match as_int(v) {
            Some(i) if (min..=max).contains(&i) => Ok(()),
            _ => Err(format!("`{n}` must be an integer from {min} to {max}")),
        },
        Kind::Enum(vals) => match v.as_str() {
            Some(s) if vals.contains(&s) => Ok(()),
            _ => Err(format!("`{n}` must be one of: {}", vals.join(", "))),
        },
        Kind::Str {
            min,
            max,
            check,
            what,
            ..
        } => {
            let s = match v {
                Value::String(s) => s,
                _ => return Err(format!("`{n}` must be {what}")),
            };
            let len = s.chars().count();
            if len < min || len > max {
                return Err(match check {
                    Some(_) => format!("`{n}` must be {what}"),
                    None => format!("`{n}` must be a string of {min} to {max} characters ({what})"),
                });
            }
            if check.is_some_and(|c| !c(s)) {
                return Err(format!("`{n}` must be {what}"));
            }
            Ok(())
        }
    }
}

/// An integer JSON value (including `20.0`, which JSON Schema counts as an
/// integer).
pub fn as_int(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}
