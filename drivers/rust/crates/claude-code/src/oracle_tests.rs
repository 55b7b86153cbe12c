//! Differential tests: the typed parser (`parse`) against the `Value`-tree parser it replaced
//! (`value_parse`), on every transcript line at every batch split, on mutations of each line that
//! give its members every JSON type, drop them, or swap in every line/event/delta type the driver
//! knows (`murmur_driver_abi::oracle`), and on odd lines. Any difference in the events fails with
//! the line that caused it.

use super::{parse, value_parse};
use murmur_driver_abi::testing::{golden_launch_request, read_transcript, BATCH_SPLITS};
use murmur_driver_abi::oracle::{assert_same_on_mutations, assert_unread_members_are_skipped, odd_lines};
use murmur_driver_abi::Event;

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
    let checked = assert_same_on_mutations(&all_lines(), &preamble, 3, &SELECTORS, &KNOWN, events_typed, events_value);
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
    for line in odd.iter().map(|s| s.to_string()).chain(odd_lines(&KNOWN)) {
        let lines = vec![line];
        assert_eq!(events_typed(&lines), events_value(&lines), "line: {:?}", lines[0]);
    }
}

#[test]
fn an_unread_member_only_a_value_tree_refuses_is_skipped() {
    // The other documented difference: such a member no longer makes the whole line unreadable.
    assert_unread_members_are_skipped(&KNOWN, "unreadable claude line: ", events_typed, events_value);
}

#[test]
fn a_repeated_member_is_read_as_unreadable_where_the_value_tree_kept_the_last() {
    // The documented difference (murmur_driver_abi::lenient): harnesses never repeat a key.
    let line = r#"{"type":"result","type":"result","result":"x","is_error":false}"#.to_owned();
    assert!(matches!(&events_typed(&[line.clone()])[..], [Event::Note(n)] if n.starts_with("unreadable claude line: ")));
    assert_eq!(events_value(&[line]), vec![Event::TurnEnd("x".to_owned())]);
}
