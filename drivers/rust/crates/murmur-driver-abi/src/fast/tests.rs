//! The fast path against serde_json on values chosen to be hard (the drivers' own tests, through
//! `testing`, cover their transcripts' lines and damaged copies of them).

use crate::lenient::{object_line_into, Field, Obj, ReadInPlace};
use crate::testing::assert_fast_path_agrees;
use serde::de::MapAccess;
use serde::Deserialize;

/// A line type as the drivers write them: members read in place, a nested derived struct.
#[derive(Default)]
struct Line<'a> {
    kind: Field<'a>,
    item: Obj<Item<'a>>,
}

#[derive(Deserialize, Default, PartialEq, Debug)]
#[serde(default)]
struct Item<'a> {
    #[serde(borrow)]
    id: Field<'a>,
    #[serde(borrow)]
    n: Field<'a>,
}

impl<'de> ReadInPlace<'de> for Line<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name {
            "type" => Some(0),
            "item" => Some(1),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            _ => self.item = map.next_value()?,
        }
        Ok(())
    }
}

fn line_reads(text: &str) -> (bool, bool) {
    let fast = super::read_line(text, &mut Line::default(), &mut Vec::new()).is_ok();
    (fast, object_line_into(text, &mut Line::default()))
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
        "{\"type\":\"a\",\"type\":\"b\"}", "{\"item\":{\"id\":\"a\",\"id\":\"b\"}}", "{\"item\":{\"n\":1.5}}",
        "{\"item\":{\"n\":-0}}", "{\"item\":[1,{\"id\":2}]}", "{\"ty\\u0070e\":\"x\"}", "[{\"type\":\"x\"}]",
    ];
    for v in values {
        assert_fast_path_agrees(v, &line_reads);
    }
    for n in [1, 50, 99, 100, 101, 127, 128, 129, 200] {
        assert_fast_path_agrees(&deep(n), &line_reads);
        assert_fast_path_agrees(&format!("{{\"type\":\"x\",\"skipped\":{}}}", deep(n)), &line_reads);
    }
}

#[test]
fn a_nested_derived_struct_is_read_by_the_fast_path_as_serde_json_reads_it() {
    let text = r#"{"type":"t\n","other":[1,{"x":"y"}],"item":{"n":-7,"id":"a\"b","z":null}}"#;
    let mut ours = Line::default();
    assert!(super::read_line(text, &mut ours, &mut Vec::new()).is_ok());
    let mut theirs = Line::default();
    assert!(object_line_into(text, &mut theirs));
    assert_eq!(ours.kind, theirs.kind);
    assert_eq!(ours.kind.as_str(), Some("t\n"));
    assert_eq!(ours.item, theirs.item);
    assert_eq!(ours.item.get().map(|i| (i.id.as_str(), i.n.as_i64())), Some((Some("a\"b"), Some(-7))));
}

#[test]
fn a_line_the_fast_path_gives_up_on_is_read_again_by_serde_json_from_a_fresh_line() {
    // The float makes the fast path give up after it has read `type`.
    let text = r#"{"type":"a","item":{"n":1.5}}"#;
    assert!(super::read_line(text, &mut Line::default(), &mut Vec::new()).is_err());
    let mut line = Line::default();
    assert!(super::object_line_into(text, &mut line, &mut Vec::new()));
    assert_eq!(line.kind.as_str(), Some("a"));
    assert_eq!(line.item.get().and_then(|i| i.n.as_f64()), Some(1.5));
    assert!(!super::object_line_into(r#"{"type":"a","type":"b"}"#, &mut Line::default(), &mut Vec::new()));
}
