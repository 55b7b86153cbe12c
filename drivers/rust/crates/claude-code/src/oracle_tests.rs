//! Differential tests: the typed parser (`parse`) against the `Value`-tree parser it replaced
//! (`value_parse`), on every transcript line and on mutations of each line that give its members
//! every JSON type, drop them, or swap in every line/event/delta type the driver knows. Any
//! difference in the events fails with the line that caused it.

use super::{parse, value_parse};
use murmur_driver_abi::testing::{golden_launch_request, read_transcript, BATCH_SPLITS};
use murmur_driver_abi::Event;
use serde_json::{json, Value};

const TRANSCRIPTS: [&str; 7] = ["auth401", "happy", "interrupt", "mcp", "rate429", "thinking", "twoturn"];

/// Members whose value selects a branch: each known value is tried in their place.
const SELECTORS: [&str; 7] = ["type", "subtype", "status", "rateLimitType", "apiKeySource", "terminal_reason", "is_error"];

const KNOWN: [&str; 27] = [
    "system", "stream_event", "assistant", "user", "result", "rate_limit_event", "control_response", "keep_alive",
    "init", "api_retry", "status", "thinking_tokens", "message_start", "content_block_start", "content_block_delta",
    "content_block_stop", "text_delta", "thinking_delta", "input_json_delta", "signature_delta", "tool_use", "text",
    "thinking", "tool_result", "five_hour", "allowed_warning", "aborted_streaming",
];

fn events_typed(lines: &[String]) -> Vec<Event> {
    let request = golden_launch_request();
    let mut parser = parse::ClaudeParser::for_bridge(request.bridge.as_ref());
    let mut events = Vec::new();
    for line in lines {
        parser.parse_line(line, &mut events);
    }
    events
}

fn events_value(lines: &[String]) -> Vec<Event> {
    let request = golden_launch_request();
    let mut parser = value_parse::ClaudeParser::for_bridge(request.bridge.as_ref());
    let mut events = Vec::new();
    for line in lines {
        parser.parse_line(line, &mut events);
    }
    events
}

fn all_lines() -> Vec<String> {
    TRANSCRIPTS.iter().flat_map(|t| read_transcript("claude-code", t)).collect()
}

/// Values every member is replaced with in turn: each JSON type, numbers of each kind, a string
/// with escapes (so serde_json cannot borrow it), and objects/arrays the driver might misread.
fn replacements() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(7),
        json!(-3),
        json!(2.5),
        json!(1e300),
        json!(""),
        json!("x"),
        json!("a\"b\\c\u{e9}\n\u{1}"),
        json!("mcp__murmur__echo"),
        json!([]),
        json!([1, "a", null, {"type": "text", "text": "t"}]),
        json!({}),
        json!({"type": "tool_use", "id": "i", "name": "n", "text": "t"}),
    ]
}

/// Each mutation of `v`: at every member and array element (first three) down to `depth`, the
/// member dropped, replaced by each of `replacements()`, and for selectors by each known value.
fn mutations(v: &Value, depth: usize, out: &mut Vec<Value>) {
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
                if SELECTORS.contains(&key.as_str()) {
                    for known in KNOWN {
                        with(json!(known));
                    }
                }
                let mut inner = Vec::new();
                mutations(member, depth - 1, &mut inner);
                for m in inner {
                    with(m);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate().take(3) {
                let mut inner = Vec::new();
                mutations(item, depth - 1, &mut inner);
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

#[test]
fn typed_parse_equals_the_value_parse_on_every_transcript_at_every_split() {
    for name in TRANSCRIPTS {
        let lines = read_transcript("claude-code", name);
        let expected = events_value(&lines);
        for batch in BATCH_SPLITS {
            let mut got = Vec::new();
            let request = golden_launch_request();
            let mut parser = parse::ClaudeParser::for_bridge(request.bridge.as_ref());
            for chunk in lines.chunks(batch) {
                for line in chunk {
                    parser.parse_line(line, &mut got);
                }
            }
            assert_eq!(got, expected, "{} at batch {}", name, batch);
        }
    }
}

#[test]
fn typed_parse_equals_the_value_parse_on_mutated_lines() {
    // A tool-use block at index 0 and 1 is open, so deltas of either have a call to report on.
    let preamble: Vec<String> = vec![
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t0","name":"mcp__murmur__echo"}}}"#.to_owned(),
        r#"{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"other"}}}"#.to_owned(),
    ];
    let mut checked = 0usize;
    for line in all_lines() {
        let v: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        let mut variants = Vec::new();
        mutations(&v, 3, &mut variants);
        for variant in variants {
            let text = variant.to_string();
            // Twice: a repeated session, usage that adds up, quota windows that merge.
            let lines: Vec<String> = preamble.iter().cloned().chain([text.clone(), text.clone()]).collect();
            assert_eq!(events_typed(&lines), events_value(&lines), "line: {}", text);
            checked += 1;
        }
    }
    assert!(checked > 10_000, "only {} mutations checked", checked);
}

#[test]
fn typed_parse_equals_the_value_parse_on_lines_that_are_not_objects() {
    let odd = [
        "", "   ", "\t", "[]", "[1,2]", "3", "\"text\"", "null", "true", "{", "{}", " {\"type\":\"keep_alive\"}",
        "{\"type\":\"keep_alive\"} x", "{\"type\":\"keep_alive\"}{}", "\u{a0}{\"type\":\"keep_alive\"}",
        "[\"system\",\"init\"]", "{\"type\":\"user\",\"message\":[]}", "{\"type\":\"stream_event\"}",
        "{\"type\":\"stream_event\",\"event\":[{\"type\":\"message_start\"}]}", "{\"type\":\"result\"}",
        "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"rateLimitType\":\"__\"}}",
        "{\"typ\\u0065\":\"result\",\"result\":\"escaped key\",\"is_error\":false}",
        "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\\u00e9\",\"model\":\"m\\n\"}",
    ];
    for line in odd {
        let lines = vec![line.to_owned()];
        assert_eq!(events_typed(&lines), events_value(&lines), "line: {:?}", line);
    }
}

#[test]
fn a_repeated_member_is_read_as_unreadable_where_the_value_tree_kept_the_last() {
    // The documented difference (murmur_driver_abi::lenient): harnesses never repeat a key.
    let line = r#"{"type":"result","type":"result","result":"x","is_error":false}"#.to_owned();
    assert!(matches!(&events_typed(&[line.clone()])[..], [Event::Note(n)] if n.starts_with("unreadable claude line: ")));
    assert_eq!(events_value(&[line]), vec![Event::TurnEnd("x".to_owned())]);
}
