//! Native test support for differential tests of a driver's typed parser (`lenient` members)
//! against the `Value`-tree parser it replaced: mutations of real lines that give each member
//! every JSON type, drop it, or swap in every value the driver branches on, and odd lines that
//! are not objects. Any difference in the events fails with the line that caused it.

use crate::types::Event;
use serde_json::{json, Value};

/// Values every member is replaced with in turn: each JSON type, numbers of each kind, a string
/// with escapes (so serde_json cannot borrow it), and objects/arrays a driver might misread.
pub fn replacements() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(7),
        json!(-3),
        json!(2.5),
        json!(1e300),
        json!(9_223_372_036_854_775_808u64),
        json!(""),
        json!("x"),
        json!("a\"b\\c\u{e9}\n\u{1}"),
        json!("mcp__murmur__echo"),
        json!([]),
        json!([1, "a", null, {"type": "text", "text": "t"}]),
        json!({}),
        json!({"type": "tool_use", "id": "i", "name": "n", "text": "t", "message": "m"}),
    ]
}

/// Each mutation of `v`: at every member and array element (first three) down to `depth`, the
/// member dropped, replaced by each of [`replacements`], and for a member named in `selectors` by
/// each of `known` (the values a driver branches on).
pub fn mutations(v: &Value, depth: usize, selectors: &[&str], known: &[&str], out: &mut Vec<Value>) {
    if depth == 0 {
        return;
    }
    match v {
        Value::Object(map) => {
            for (key, member) in map {
                let mut dropped = map.clone();
                dropped.remove(key);
                out.push(Value::Object(dropped));
                let mut with = |replacement: Value| {
                    let mut m = map.clone();
                    m.insert(key.clone(), replacement);
                    out.push(Value::Object(m));
                };
                for r in replacements() {
                    with(r);
                }
                if selectors.contains(&key.as_str()) {
                    for k in known {
                        with(json!(k));
                    }
                }
                let mut inner = Vec::new();
                mutations(member, depth - 1, selectors, known, &mut inner);
                for m in inner {
                    with(m);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate().take(3) {
                let mut inner = Vec::new();
                mutations(item, depth - 1, selectors, known, &mut inner);
                for m in inner {
                    let mut copy = items.clone();
                    copy[i] = m;
                    out.push(Value::Array(copy));
                }
            }
        }
        _ => {}
    }
}

/// Runs every mutation of every line of `lines` (to `depth`), each after `preamble` and twice
/// (state that repeats: a session, summed usage), through `typed` and `oracle`, and requires the
/// same events. Returns how many mutations were checked.
pub fn assert_same_on_mutations(
    lines: &[String],
    preamble: &[String],
    depth: usize,
    selectors: &[&str],
    known: &[&str],
    typed: impl Fn(&[String]) -> Vec<Event>,
    oracle: impl Fn(&[String]) -> Vec<Event>,
) -> usize {
    let mut checked = 0;
    for line in lines {
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        let mut variants = Vec::new();
        mutations(&v, depth, selectors, known, &mut variants);
        for variant in variants {
            let text = variant.to_string();
            let run: Vec<String> = preamble.iter().cloned().chain([text.clone(), text.clone()]).collect();
            assert_eq!(typed(&run), oracle(&run), "line: {}", text);
            checked += 1;
        }
    }
    checked
}

/// Lines that are blank, not JSON, not an object, an object with trailing characters, or with
/// escaped keys and values, each given as `{"type":"T",…}` for each `T` of `types` where a type
/// matters.
pub fn odd_lines(types: &[&str]) -> Vec<String> {
    let mut lines: Vec<String> = [
        "", "   ", "\t", "[]", "[1,2]", "3", "\"text\"", "null", "true", "{", "{}", "\u{a0}{}", "{} x", "{}{}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for t in types {
        lines.push(format!("{{\"type\":\"{}\"}}", t));
        lines.push(format!(" {{\"type\":\"{}\"}}", t));
        lines.push(format!("{{\"type\":\"{}\"}} x", t));
        lines.push(format!("[\"{}\"]", t));
        lines.push(format!("{{\"typ\\u0065\":\"{}\",\"id\":\"\\u00e9\",\"text\":\"a\\nb\"}}", t));
    }
    lines
}

/// Values serde_json refuses when it builds them (nested deeper than its recursion limit of 128,
/// a number beyond f64, a lone surrogate escape) but skips without a word in a member nobody
/// reads (`lenient`'s documented difference).
pub fn values_only_a_tree_refuses() -> Vec<String> {
    vec![format!("{}{}", "[".repeat(200), "]".repeat(200)), "1e400".to_owned(), "\"\\ud800\"".to_owned()]
}

/// For each `T` of `types` and each of [`values_only_a_tree_refuses`] as an unread member `x` of
/// `{"type":"T"}`: the oracle refused the whole line as unreadable (its note starts with
/// `unreadable`), the typed parser reads it as the line without `x` (a note naming the line
/// compared by its words before the line).
pub fn assert_unread_members_are_skipped(
    types: &[&str],
    unreadable: &str,
    typed: impl Fn(&[String]) -> Vec<Event>,
    oracle: impl Fn(&[String]) -> Vec<Event>,
) {
    for t in types {
        let plain = vec![format!("{{\"type\":\"{}\",\"id\":\"i\",\"text\":\"t\"}}", t)];
        for bad in values_only_a_tree_refuses() {
            let line = vec![format!("{{\"type\":\"{}\",\"id\":\"i\",\"x\":{},\"text\":\"t\"}}", t, bad)];
            assert!(
                matches!(&oracle(&line)[..], [Event::Note(n)] if n.starts_with(unreadable)),
                "the oracle read {:?}",
                line
            );
            assert_eq!(notes_cut(typed(&line)), notes_cut(oracle(&plain)), "line: {:?}", line);
        }
    }
}

fn notes_cut(events: Vec<Event>) -> Vec<Event> {
    let cut = |n: String| n.split(": {").next().unwrap_or("").to_owned();
    events.into_iter().map(|e| if let Event::Note(n) = e { Event::Note(cut(n)) } else { e }).collect()
}
