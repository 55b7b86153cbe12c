//! `JsonText` read by the fast path and by serde_json against the `Value` way it replaces:
//! `serde_json::to_string` of the member's `Value`.

use super::JsonText;
use crate::lenient::{Field, ReadInPlace};
use serde::de::MapAccess;
use serde_json::Value;

#[derive(Default)]
struct Probe<'a> {
    j: JsonText<'a>,
    k: Field<'a>,
}

impl<'de> ReadInPlace<'de> for Probe<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name {
            "j" => Some(0),
            "k" => Some(1),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.j = map.next_value()?,
            _ => self.k = map.next_value()?,
        }
        Ok(())
    }
}

/// The member `j`'s text as the `Value` way gives it, `None` when serde_json refuses the line.
fn expected(line: &str) -> Option<Option<String>> {
    let v: Value = serde_json::from_str(line).ok()?;
    Some(v.get("j").map(crate::util::json_text))
}

/// Reads `line` by the fast path and by serde_json; requires the text the `Value` way gives from
/// both, and returns whether the fast path kept the text (`Raw`), `None` when it gave up.
fn check(line: &str) -> Option<bool> {
    let want = expected(line);
    let mut serde = Probe::default();
    let serde_read = crate::lenient::object_line_into(line, &mut serde);
    assert_eq!(serde_read, want.is_some(), "serde_json on {:?}", line);
    assert!(!matches!(serde.j, JsonText::Raw(_)), "serde_json kept the text of {:?}", line);
    let mut fast = Probe::default();
    let fast_read = crate::fast::read_line(line, &mut fast, &mut Vec::new()).is_ok();
    if !fast_read {
        return None;
    }
    let want = want.unwrap_or_else(|| panic!("the fast path read {:?}, serde_json refused it", line));
    assert_eq!(serde.j.text(), want, "serde_json's text of {:?}", line);
    assert_eq!(fast.j.text(), want, "the fast path's text of {:?}", line);
    assert_eq!(fast.k, serde.k, "the member after j in {:?}", line);
    Some(matches!(fast.j, JsonText::Raw(_)))
}

/// Values whose text is what serde_json writes: kept as text.
const CANONICAL: &[&str] = &[
    "null", "true", "false", "0", "7", "-7", "999999999999999999", "-999999999999999999", "\"\"", "\"a\"",
    "\"\\\"\\\\\\b\\f\\n\\r\\t\"", "\"é€😀\u{7f}\"", "\"12345678\\n12345678\\t1\"", "[]", "{}", "[1,\"a\",null]",
    "{\"a\":1}", "{\"text\":\"ping\"}", "{\"a\":{\"a\":{\"a\":[]}},\"b\":[{\"a\":1},{\"a\":2}]}",
    "{\"args\":[\"hello-bridge\"]}", "{\"ab\":1,\"a\":2,\"b\":3}", "[[[[[[[[[[[]]]]]]]]]]]",
];

/// Values whose text serde_json writes otherwise (or may), or that it refuses: never kept.
const OTHERWISE: &[&str] = &[
    "[1, 2]", "{\"a\": 1}", "{ \"a\":1}", "[1 ]", "{\"a\":1 }", "{\"a\" :1}", "\"\\/\"", "\"\\u0041\"",
    "\"\\u00e9\"", "\"\\u001f\"", "\"\\u001F\"", "\"\\ud83d\\ude00\"", "\"\\ud800\"", "1.0", "1.5", "1e3", "1E3",
    "-0", "-0.0", "1000000000000000000", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
    "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":2,\"a\":3}", "{\"x\":{\"a\":[],\"a\":[]}}", "[{\"a\":1,\"a\":1}]",
    "{\"a\":1,}", "[1,]", "[,1]", "{,}", "01", "\"a\u{1}\"", "nul", "tru", "[1", "{\"a\":1", "\"open",
    "{\"\\u0061\":1,\"a\":2}", "{\"a\\n\":1,\"a\\n\":2}",
];

#[test]
fn a_value_written_as_serde_json_writes_it_is_kept_as_its_text() {
    for v in CANONICAL {
        let lines = [
            format!("{{\"j\":{}}}", v),
            format!("{{\"k\":1,\"j\":{},\"k2\":2}}", v),
            format!("{{ \"j\" : {} , \"k\":\"x\"}}", v),
        ];
        for line in lines {
            assert_eq!(check(&line), Some(true), "{}", line);
        }
    }
}

#[test]
fn any_other_value_reads_as_its_value_written_out() {
    for v in OTHERWISE {
        for line in [format!("{{\"j\":{}}}", v), format!("{{\"j\":{},\"k\":\"x\"}}", v)] {
            assert_ne!(check(&line), Some(true), "{}", line);
        }
    }
}

#[test]
fn an_object_of_more_members_than_are_checked_is_read_as_a_value() {
    let members = |n: usize| (0..n).map(|i| format!("\"m{}\":{}", i, i)).collect::<Vec<_>>().join(",");
    let at_most = format!("{{\"j\":{{{}}}}}", members(super::MAX_CHECKED_MEMBERS));
    assert_eq!(check(&at_most), Some(true));
    let over = format!("{{\"j\":{{{}}}}}", members(super::MAX_CHECKED_MEMBERS + 1));
    assert_eq!(check(&over), Some(false));
    // The 17th name repeating the first: caught only because the object is left to the `Value`.
    let repeated = format!("{{\"j\":{{{},\"m0\":\"again\"}}}}", members(super::MAX_CHECKED_MEMBERS));
    assert_eq!(check(&repeated), Some(false));
}

#[test]
fn values_nested_to_the_fast_paths_depth_and_beyond_agree_with_serde_json() {
    for n in [97, 98, 99, 100, 101, 127, 128, 129] {
        let v = format!("{}{}", "[".repeat(n), "]".repeat(n));
        check(&format!("{{\"j\":{}}}", v));
        check(&format!("{{\"j\":{{\"a\":{}}}}}", v));
    }
}

#[test]
fn every_pair_of_pieces_in_arrays_and_objects_agrees_with_the_value_way() {
    let pieces: Vec<&str> = CANONICAL.iter().chain(OTHERWISE.iter()).copied().collect();
    let mut kept = 0;
    for a in &pieces {
        for b in &pieces {
            let values = [
                format!("[{},{}]", a, b),
                format!("{{\"a\":{},\"b\":{}}}", a, b),
                format!("{{\"a\":[{}],\"a\":{}}}", a, b),
            ];
            for v in values {
                kept += (check(&format!("{{\"j\":{}}}", v)) == Some(true)) as usize;
            }
        }
    }
    assert!(kept >= CANONICAL.len() * CANONICAL.len() * 2, "kept {}", kept);
}
