//! The shared fast path (`murmur_driver_abi::fast`) on this driver's lines, against serde_json: it
//! gives up on none of the transcripts' lines and never accepts a damaged line serde_json refuses.

use crate::parse::Line;
use murmur_driver_abi::fast;
use murmur_driver_abi::lenient::object_line_into;
use murmur_driver_abi::testing::*;
use murmur_driver_abi::Event;

const TRANSCRIPTS: [&str; 7] = ["auth401", "happy", "interrupt", "mcp", "rate429", "thinking", "twoturn"];

fn all_lines() -> Vec<String> {
    TRANSCRIPTS.iter().flat_map(|t| read_transcript("claude-code", t)).collect()
}

fn line_reads(text: &str) -> (bool, bool) {
    let fast = fast::read_line(text, &mut Line::default(), &mut Vec::new()).is_ok();
    (fast, object_line_into(text, &mut Line::default()))
}

#[test]
fn the_fast_path_reads_every_transcript_line_without_giving_up() {
    let lines = all_lines();
    assert!(lines.iter().all(|line| line_reads(line).1), "every claude line is a readable object");
    assert_fast_path_reads_every_line(&lines, &line_reads);
    for line in &lines {
        // As a whole value it gives up only on a float (`result` lines carry their cost).
        if !line.contains("_usd\":") && !line.contains("costUSD") {
            assert!(fast::read_value::<serde_json::Value>(line).is_ok(), "gave up on {}", line);
        }
    }
}

#[test]
fn the_fast_path_never_accepts_a_damaged_transcript_line() {
    assert_fast_path_refuses_damaged_lines(&one_line_of_each_kind(&all_lines()), &line_reads);
}

#[test]
fn a_nested_object_with_a_repeated_member_makes_the_line_unreadable_as_the_derived_struct_did() {
    let mut driver = crate::ClaudeCodeDriver::default();
    let line = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","text":"b"}}}"#;
    let events = murmur_driver_abi::Driver::parse(&mut driver, &[line.to_owned()]);
    assert!(matches!(&events[..], [Event::Note(n)] if n.starts_with("unreadable claude line: ")), "{:?}", events);
    let line = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}}"#;
    let events = murmur_driver_abi::Driver::parse(&mut driver, &[line.to_owned()]);
    assert_eq!(events, vec![Event::TextDelta("a".to_owned())]);
}
