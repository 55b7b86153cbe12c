//! The fast path (`fast`) against serde_json: it reads what it accepts into the same values, never
//! accepts what serde_json refuses, and gives up on none of the transcripts' lines.

use crate::fast;
use crate::parse::Line;
use murmur_driver_abi::lenient::object_line_into;
use murmur_driver_abi::testing::read_transcript;
use murmur_driver_abi::Event;
use serde_json::Value;

const TRANSCRIPTS: [&str; 7] = ["auth401", "happy", "interrupt", "mcp", "rate429", "thinking", "twoturn"];

fn all_lines() -> Vec<String> {
    TRANSCRIPTS.iter().flat_map(|t| read_transcript("claude-code", t)).collect()
}

/// The first line of each kind (`type`, `subtype`, event type): the damaged-line tests try every
/// position of each, and the whole set would take a minute unoptimised.
fn one_line_of_each_kind() -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    all_lines()
        .into_iter()
        .filter(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            seen.insert(format!("{}/{}/{}", v["type"], v["subtype"], v["event"]["type"]))
        })
        .collect()
}

/// Both readers on `text`: where the fast path reads a value, serde_json reads the same one;
/// where serde_json refuses, so does the fast path. The same for `text` read as a line.
fn assert_agrees(text: &str) {
    let ours = fast::read_value::<Value>(text);
    let theirs = serde_json::from_str::<Value>(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", text),
        (Ok(a), Err(e)) => panic!("the fast path read {:?} as {:?}, serde_json refused it ({})", text, a, e),
        (Err(_), _) => {}
    }
    let mut line = Line::default();
    if fast::read_line(text, &mut line, &mut Vec::new()).is_ok() {
        let mut line = Line::default();
        assert!(object_line_into(text, &mut line), "the fast path read {:?} as a line, serde_json refused it", text);
    }
}

#[test]
fn the_fast_path_reads_every_transcript_line_without_giving_up() {
    for line in all_lines() {
        assert!(fast::read_line(&line, &mut Line::default(), &mut Vec::new()).is_ok(), "gave up on {}", line);
        // As a whole value it gives up only on a float (`result` lines carry their cost).
        if !line.contains("_usd\":") && !line.contains("costUSD") {
            assert!(fast::read_value::<Value>(&line).is_ok(), "gave up on {}", line);
        }
        assert_agrees(&line);
    }
}

#[test]
fn the_fast_path_agrees_with_serde_json_on_tricky_values() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let values = [
        "0", "-1", "-0", "01", "1.5", "1e3", "1E+3", "1e", "1.", ".5", "-", "--1", "18446744073709551615",
        "18446744073709551616", "999999999999999999", "-999999999999999999", "9999999999999999999", "1x",
        "true", "false", "null", "nul", "tru", "nulll", "\"\"", "\"a\\\"b\"", "\"\\/\\b\\f\\n\\r\\t\\\\\"",
        "\"\\u00e9\\u20ac\"", "\"\\u00E9\"", "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\u12\"",
        "\"\\x\"", "\"a\u{1}b\"", "\"a\tb\"", "\"\u{7f}\"", "\"é€😀\"", "\"12345678\\\"12345678\"",
        "\"unterminated", "\"\\", "[]", "[1,]", "[,1]", "[1 2]", "[1,2]", " [ 1 , 2 ] ", "{}", "{,}",
        "{\"a\":1,}", "{\"a\" 1}", "{\"a\":}", "{1:2}", "{\"a\":1 \"b\":2}", "{\"a\":1}x", "{\"a\":1}}",
        "{\"a\":[{\"b\":null}],\"a\":2}", "{\"k\\u0065y\":\"v\\nw\"}", "\r\n\t{\"a\":true}\r\n", "",
    ];
    for v in values {
        assert_agrees(v);
    }
    for n in [1, 50, 99, 100, 101, 127, 128, 129, 200] {
        assert_agrees(&deep(n));
        assert_agrees(&format!("{{\"type\":\"x\",\"skipped\":{}}}", deep(n)));
    }
}

#[test]
fn the_fast_path_never_accepts_a_damaged_transcript_line() {
    // Every prefix, and the line without each one of its characters.
    for line in one_line_of_each_kind() {
        for (at, _) in line.char_indices() {
            assert_agrees(&line[..at]);
            let mut damaged = line.clone();
            damaged.remove(at);
            assert_agrees(&damaged);
        }
    }
}

#[test]
fn the_fast_path_never_accepts_a_transcript_line_with_a_byte_inserted() {
    // A byte that changes JSON's structure at every position of one line of each kind.
    for line in one_line_of_each_kind() {
        for (at, _) in line.char_indices() {
            for inserted in [",", "\"", "\\", "0", "-", ".", "}", "]", ":", "\u{1}"] {
                let mut damaged = line.clone();
                damaged.insert_str(at, inserted);
                assert_agrees(&damaged);
            }
        }
    }
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
