//! Differential tests: the typed parser (`parse`) against the `Value`-tree parser it replaced
//! (`value_parse`), on every transcript line at every batch split, on mutations of each line
//! (and of lines for the cases no transcript has), and on odd lines.

use super::{parse, value_parse};
use murmur_driver_abi::oracle::{assert_same_on_mutations, assert_unread_members_are_skipped, odd_lines};
use murmur_driver_abi::testing::{golden_launch_request, read_transcript, BATCH_SPLITS};
use murmur_driver_abi::Event;

const TRANSCRIPTS: [&str; 5] = ["auth401", "happy", "interrupt", "mcp", "rate429"];

/// Members whose value selects a branch: each known value is tried in their place.
const SELECTORS: [&str; 4] = ["type", "role", "status", "delta"];

const KNOWN: [&str; 11] =
    ["init", "message", "tool_use", "tool_result", "error", "result", "user", "assistant", "success", "warning", "true"];

/// Cases the recorded transcripts do not have, with every member read.
const SYNTHETIC: [&str; 6] = [
    r#"{"type":"message","role":"assistant","content":"Whole \u00e9","delta":false}"#,
    r#"{"type":"tool_use","tool_name":"other_tool","tool_id":"t2","parameters":{"a":[1,2.5,null],"b":{"c":"d"}}}"#,
    r#"{"type":"tool_result","tool_id":"t2","status":"error","output":"partial","error":{"type":"tool_error","message":"boom"}}"#,
    r#"{"type":"tool_result","tool_id":"t3","status":"error","error":{"message":"no output"}}"#,
    r#"{"type":"error","severity":"warning","message":"Loop detected"}"#,
    r#"{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns"},"stats":{"input_tokens":10,"output_tokens":2,"cached":4}}"#,
];

fn events_typed(lines: &[String]) -> Vec<Event> {
    let request = golden_launch_request();
    let mut parser = parse::GeminiParser::for_bridge(request.bridge.as_ref());
    let mut events = Vec::new();
    for line in lines {
        parser.parse_line(line, &mut events);
    }
    events
}

fn events_value(lines: &[String]) -> Vec<Event> {
    let request = golden_launch_request();
    let mut parser = value_parse::GeminiParser::for_bridge(request.bridge.as_ref());
    let mut events = Vec::new();
    for line in lines {
        parser.parse_line(line, &mut events);
    }
    events
}

fn all_lines() -> Vec<String> {
    let mut lines: Vec<String> = TRANSCRIPTS.iter().flat_map(|t| read_transcript("gemini-cli", t)).collect();
    lines.extend(SYNTHETIC.iter().map(|s| s.to_string()));
    lines
}

#[test]
fn typed_parse_equals_the_value_parse_on_every_transcript_at_every_split() {
    for name in TRANSCRIPTS {
        let lines = read_transcript("gemini-cli", name);
        let expected = events_value(&lines);
        for batch in BATCH_SPLITS {
            let request = golden_launch_request();
            let mut parser = parse::GeminiParser::for_bridge(request.bridge.as_ref());
            let mut got = Vec::new();
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
    // Streamed text first, so a tool call or a result completes it.
    let preamble = vec![r#"{"type":"message","role":"assistant","content":"so far","delta":true}"#.to_owned()];
    let checked = assert_same_on_mutations(&all_lines(), &preamble, 3, &SELECTORS, &KNOWN, events_typed, events_value);
    assert!(checked > 3_000, "only {} mutations checked", checked);
}

#[test]
fn typed_parse_equals_the_value_parse_on_odd_lines() {
    for line in odd_lines(&KNOWN) {
        let lines = vec![line];
        assert_eq!(events_typed(&lines), events_value(&lines), "line: {:?}", lines[0]);
    }
}

#[test]
fn an_unread_member_only_a_value_tree_refuses_is_skipped() {
    // The other documented difference: such a member no longer makes the whole line unreadable.
    assert_unread_members_are_skipped(&KNOWN, "unreadable gemini line: ", events_typed, events_value);
}

#[test]
fn a_repeated_member_is_read_as_unreadable_where_the_value_tree_kept_the_last() {
    // The documented difference (murmur_driver_abi::lenient): harnesses never repeat a key.
    let line = r#"{"type":"message","role":"user","role":"user"}"#.to_owned();
    assert!(matches!(&events_typed(&[line.clone()])[..], [Event::Note(n)] if n.starts_with("unreadable gemini line: ")));
    assert_eq!(events_value(&[line]), vec![]);
}
