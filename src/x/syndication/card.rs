//! What a syndication Tweet attaches beside its text, mapped into the
//! FxTwitter shape: its `card` (a link card, or a poll when the card's
//! `name` starts with `poll`) and its `article`.
//!
//! The card is X's legacy card object: `name`, `url` and `binding_values`,
//! an object of `{"string_value": …}` (or `{"image_value": …}`) keyed by
//! binding name (`title`, `description`, `domain`, `vanity_url`,
//! `card_url`; a poll's `choice1_label`, `choice1_count`, …,
//! `counts_are_final`). The GraphQL form, an array of `{key, value}`, is
//! read the same way. Anything else in it is ignored; a card with nothing
//! to show maps to nothing.

use serde_json::{json, Map, Value};

/// Most poll choices read (X allows four).
const MAX_POLL_CHOICES: usize = 4;

/// A binding's string, trimmed, when non-empty.
fn binding<'a>(card: &'a Value, key: &str) -> Option<&'a str> {
    let values = card.get("binding_values")?;
    let value = match values {
        Value::Object(o) => o.get(key),
        Value::Array(a) => a
            .iter()
            .find(|b| b.get("key").and_then(Value::as_str) == Some(key))
            .and_then(|b| b.get("value")),
        _ => None,
    }?;
    value
        .get("string_value")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The FxTwitter `poll` of a poll card: choices in order with their
/// counts and shares (one decimal), the total, and `Final results` when X
/// says the counts are final.
fn poll(card: &Value) -> Option<Value> {
    let mut choices = Vec::new();
    for i in 1..=MAX_POLL_CHOICES {
        let Some(label) = binding(card, &format!("choice{i}_label")) else {
            continue;
        };
        let count = binding(card, &format!("choice{i}_count")).and_then(|c| c.parse::<u64>().ok());
        choices.push((label, count));
    }
    if choices.is_empty() {
        return None;
    }
    let total: u64 = choices.iter().filter_map(|(_, c)| *c).sum();
    let rows: Vec<Value> = choices
        .iter()
        .map(|(label, count)| {
            let mut c = json!({"label": label});
            if let Some(n) = count {
                c["count"] = json!(n);
                let pct = if total == 0 {
                    0.0
                } else {
                    (*n as f64 * 1000.0 / total as f64).round() / 10.0
                };
                c["percentage"] = json!(pct);
            }
            c
        })
        .collect();
    let mut p = json!({"choices": rows, "total_votes": total});
    if binding(card, "counts_are_final") == Some("true") {
        p["time_left_en"] = json!("Final results");
    }
    Some(p)
}

/// The FxTwitter `card` of a link card: title, description, the link
/// (`card_url`, else the card's `url`, its t.co link expanded by
/// `expand`) and the site (`vanity_url`, else `domain`).
fn link_card(card: &Value, expand: &dyn Fn(&str) -> String) -> Option<Value> {
    let mut c = Map::new();
    if let Some(t) = binding(card, "title") {
        c.insert("title".into(), json!(t));
    }
    if let Some(d) = binding(card, "description") {
        c.insert("description".into(), json!(d));
    }
    let url = binding(card, "card_url").or_else(|| card.get("url").and_then(Value::as_str));
    if let Some(u) = url.map(str::trim).filter(|u| !u.is_empty()) {
        c.insert("url".into(), json!(expand(u)));
    }
    if let Some(d) = binding(card, "vanity_url").or_else(|| binding(card, "domain")) {
        c.insert("domain".into(), json!(d));
    }
    (!c.is_empty()).then_some(Value::Object(c))
}

/// Inserts into status `s` what the Tweet's `card` carries: a `poll` for
/// a poll card, else a link `card`.
pub fn insert_card(s: &mut Map<String, Value>, card: &Value, expand: &dyn Fn(&str) -> String) {
    let name = card.get("name").and_then(Value::as_str).unwrap_or("");
    if name.starts_with("poll") {
        if let Some(p) = poll(card) {
            s.insert("poll".into(), p);
        }
    } else if let Some(c) = link_card(card, expand) {
        s.insert("card".into(), c);
    }
}

/// The FxTwitter `article` of a Tweet's `article` (title, preview text,
/// cover image), when it has a title or a preview.
pub fn article(a: &Value) -> Option<Value> {
    let text = |k: &str| {
        a.get(k)
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
    };
    let (title, preview) = (text("title"), text("preview_text"));
    if title.is_none() && preview.is_none() {
        return None;
    }
    let mut out = Map::new();
    if let Some(t) = title {
        out.insert("title".into(), json!(t));
    }
    if let Some(p) = preview {
        out.insert("preview_text".into(), json!(p));
    }
    if let Some(u) = a
        .pointer("/cover_media/media_info/original_img_url")
        .and_then(Value::as_str)
    {
        out.insert(
            "cover_media".into(),
            json!({"media_info": {"original_img_url": u}}),
        );
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_and_link_cards() {
        let poll_card = json!({"name": "poll3choice_text_only", "binding_values": {
            "choice1_label": {"string_value": "Tabs"}, "choice1_count": {"string_value": "2"},
            "choice2_label": {"string_value": "Spaces"}, "choice2_count": {"string_value": "1"},
            "choice3_label": {"string_value": "*Both*"},
            "counts_are_final": {"string_value": "true"}}});
        let mut s = Map::new();
        insert_card(&mut s, &poll_card, &|u| u.to_string());
        assert_eq!(
            Value::Object(s),
            json!({"poll": {"choices": [
                {"label": "Tabs", "count": 2, "percentage": 66.7},
                {"label": "Spaces", "count": 1, "percentage": 33.3},
                {"label": "*Both*"}], "total_votes": 3, "time_left_en": "Final results"}})
        );
        let graphql = json!({"name": "summary", "url": "https://t.co/c", "binding_values": [
            {"key": "title", "value": {"string_value": "T"}},
            {"key": "domain", "value": {"string_value": "e.example"}}]});
        let mut s = Map::new();
        insert_card(&mut s, &graphql, &|u| format!("{u}!"));
        assert_eq!(
            Value::Object(s),
            json!({"card": {"title": "T", "url": "https://t.co/c!", "domain": "e.example"}})
        );
        let mut s = Map::new();
        insert_card(
            &mut s,
            &json!({"name": "summary", "binding_values": 3}),
            &|u| u.into(),
        );
        assert!(s.is_empty());
    }
}
