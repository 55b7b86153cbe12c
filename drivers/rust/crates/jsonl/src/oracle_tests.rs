//! Differential tests: the typed parser (`parse`) against the `Value`-tree parser it replaced
//! (`value_parse`), on every transcript line at every batch split, on mutations of each line
//! (and of the contract's lines no transcript has), and on odd lines.

use super::{parse, value_parse};
use murmur_driver_abi::oracle::{assert_same_on_mutations, assert_unread_members_are_skipped, odd_lines};
use murmur_driver_abi::testing::{read_transcript, BATCH_SPLITS};
use murmur_driver_abi::Event;

const TRANSCRIPTS: [&str; 3] = ["error", "happy", "tools"];

/// Members whose value selects a branch: each known value is tried in their place.
const SELECTORS: [&str; 2] = ["type", "kind"];

const KNOWN: [&str; 20] = [
    "session", "delta", "text", "thinking_delta", "thinking", "tool_call", "tool_result", "retry", "usage", "note",
    "suggested_prompt", "result", "error", "auth", "quota", "max-turns", "canceled", "cancelled", "harness_error",
    "other",
];

/// Contract lines the transcripts do not have, with every member read.
const SYNTHETIC: [&str; 4] = [
    r#"{"type":"note","text":"a note from the program \u00e9"}"#,
    r#"{"type":"error","kind":"max-turns","message":"stopped"}"#,
    r#"{"type":"tool_result","id":"c2","output":"bad","is_error":true}"#,
    r#"{"type":"result","text":"done"}"#,
];

/// One parser for the whole list, as a driver keeps it for a run: a second terminal line is noted.
fn events_typed(lines: &[String]) -> Vec<Event> {
    let mut parser = parse::JsonlParser::default();
    let mut events = Vec::new();
    for line in lines {
        parser.parse_line(line, &mut events);
    }
    events
}

fn events_value(lines: &[String]) -> Vec<Event> {
    let mut parser = value_parse::JsonlParser::default();
    let mut events = Vec::new();
    for line in lines {
        parser.parse_line(line, &mut events);
    }
    events
}

fn all_lines() -> Vec<String> {
    let mut lines: Vec<String> = TRANSCRIPTS.iter().flat_map(|t| read_transcript("jsonl", t)).collect();
    lines.extend(SYNTHETIC.iter().map(|s| s.to_string()));
    lines
}

#[test]
fn typed_parse_equals_the_value_parse_on_every_transcript_at_every_split() {
    for name in TRANSCRIPTS {
        let lines = read_transcript("jsonl", name);
        let expected = events_value(&lines);
        for batch in BATCH_SPLITS {
            let mut parser = parse::JsonlParser::default();
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
    // Each mutation runs twice: a terminal one is noted the second time.
    let checked = assert_same_on_mutations(&all_lines(), &[], 3, &SELECTORS, &KNOWN, events_typed, events_value);
    assert!(checked > 1_500, "only {} mutations checked", checked);
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
    assert_unread_members_are_skipped(&KNOWN, "unreadable jsonl line: ", events_typed, events_value);
}

#[test]
fn a_repeated_member_is_read_as_unreadable_where_the_value_tree_kept_the_last() {
    // The documented difference (murmur_driver_abi::lenient): programs never repeat a key.
    let line = r#"{"type":"text","text":"a","text":"b"}"#.to_owned();
    assert!(matches!(&events_typed(&[line.clone()])[..], [Event::Note(n)] if n.starts_with("unreadable jsonl line: ")));
    assert_eq!(events_value(&[line]), vec![Event::Text("b".to_owned())]);
}
