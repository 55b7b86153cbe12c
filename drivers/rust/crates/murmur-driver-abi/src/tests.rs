use crate::json::*;
use crate::util::*;
use crate::*;
use serde_json::{json, Value};

#[test]
fn usage_plus_keeps_unreported_apart_from_zero() {
    let a = Usage { input: Some(1), output: None, cache_read: Some(0), cache_creation: None, thinking: None };
    let b = Usage { input: Some(2), output: None, cache_read: None, cache_creation: Some(3), thinking: None };
    assert_eq!(a.plus(b), Usage { input: Some(3), output: None, cache_read: Some(0), cache_creation: Some(3), thinking: None });
}

#[test]
fn every_event_has_its_canonical_json_shape() {
    let cases = vec![
        (Event::SessionStarted(SessionInfo { id: "s".into(), auth: "subscription".into(), model: None }), json!({"type":"session-started","id":"s","auth":"subscription","model":null})),
        (Event::TextDelta("a".into()), json!({"type":"text-delta","value":"a"})),
        (Event::Text("a".into()), json!({"type":"text","value":"a"})),
        (Event::ThinkingDelta("a".into()), json!({"type":"thinking-delta","value":"a"})),
        (Event::Thinking("a".into()), json!({"type":"thinking","value":"a"})),
        (Event::ToolCall(ToolCallInfo { id: "i".into(), name: "n".into(), input: "{}".into() }), json!({"type":"tool-call","id":"i","name":"n","input":"{}"})),
        (Event::ToolResult(ToolResultInfo { id: "i".into(), output: "o".into(), is_error: true }), json!({"type":"tool-result","id":"i","output":"o","is-error":true})),
        (Event::Retry(RetryInfo { attempt: 2, reason: "r".into() }), json!({"type":"retry","attempt":2,"reason":"r"})),
        (Event::Usage(Usage { input: Some(12), ..Usage::default() }), json!({"type":"usage","input":12,"output":null,"cache-read":null,"cache-creation":null,"thinking":null})),
        (Event::TurnEnd("r".into()), json!({"type":"turn-end","value":"r"})),
        (Event::failed(FailureKind::MaxTurns, "m"), json!({"type":"turn-failed","kind":"max-turns","message":"m"})),
        (Event::Note("n".into()), json!({"type":"note","value":"n"})),
        (Event::ToolCallStarted(ToolCallStart { id: "i".into(), name: "n".into() }), json!({"type":"tool-call-started","id":"i","name":"n"})),
        (Event::ToolCallProgress(ToolCallProgress { id: "i".into(), input_bytes: 7 }), json!({"type":"tool-call-progress","id":"i","input-bytes":7})),
        (Event::Quota(vec![QuotaWindow { name: "five-hour".into(), used: Some(0.5), resets_at: Some(1), window_minutes: None, state: Some(QuotaState::Warning) }]), json!({"type":"quota","windows":[{"name":"five-hour","used":0.5,"resets-at":1,"window-minutes":null,"state":"warning"}]})),
        (Event::SuggestedPrompt("p".into()), json!({"type":"suggested-prompt","value":"p"})),
    ];
    for (event, expected) in cases {
        assert_eq!(event_to_json(&event), expected);
        assert_eq!(event_to_json(&event).as_object().unwrap().keys().next().unwrap(), "type");
    }
}

#[test]
fn golden_files_put_one_event_per_line() {
    let text = events_to_pretty_lines(&[Event::Text("a".into()), Event::TurnEnd("b".into())]);
    assert_eq!(text, "[\n  {\"type\":\"text\",\"value\":\"a\"},\n  {\"type\":\"turn-end\",\"value\":\"b\"}\n]\n");
    assert_eq!(events_to_pretty_lines(&[]), "[]\n");
}

#[test]
fn the_utf8_check_answers_as_the_standard_one_wherever_a_bad_or_wide_byte_is() {
    // Every length up to 24 of ASCII, with each of these planted at every position: valid
    // characters of 2 to 4 bytes, a lone continuation byte, a truncated lead, an overlong form,
    // a surrogate, bytes never in UTF-8.
    let planted: [&[u8]; 10] = [
        "é".as_bytes(),
        "€".as_bytes(),
        "😀".as_bytes(),
        b"\x80",
        b"\xc3",
        b"\xe2\x82",
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xff",
        b"\xf5\x80\x80\x80",
    ];
    for len in 0..24 {
        let ascii: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        assert!(is_utf8(&ascii));
        for at in 0..=len {
            for p in planted {
                let mut bytes = ascii.clone();
                bytes.splice(at..at, p.iter().copied());
                assert_eq!(is_utf8(&bytes), std::str::from_utf8(&bytes).is_ok(), "{:?}", bytes);
                // A second one further on, so a valid first one does not end the check.
                for q in planted {
                    let mut twice = bytes.clone();
                    twice.extend_from_slice(&ascii[..at.min(9)]);
                    twice.extend_from_slice(q);
                    assert_eq!(is_utf8(&twice), std::str::from_utf8(&twice).is_ok(), "{:?}", twice);
                }
            }
        }
    }
}

#[test]
fn a_blank_line_is_one_that_trims_to_nothing() {
    for line in ["", " ", "\t\r\n", "\u{b}", "\u{a0}", "\u{3000} ", "{}", " {}", "a", "\u{a0}x", "\u{1}", "é", "\u{85}"] {
        assert_eq!(is_blank(line), line.trim().is_empty(), "{:?}", line);
    }
}

#[test]
fn words_are_found_as_contains_finds_each() {
    let patterns = ["ab", "b", "abc", "\"code\":401", "é", "cancel", "a b", "aaa"];
    const WORDS: Words<8> = Words::new(["ab", "b", "abc", "\"code\":401", "é", "cancel", "a b", "aaa"]);
    let pieces = ["", "a", "b", "c", "ab", "abc", " ", "é", "\"code\":40", "1", "cance", "l", "aa", "x"];
    // Every sequence of up to four pieces.
    let mut hays = vec![String::new()];
    for _ in 0..4 {
        let longer: Vec<String> = hays.iter().flat_map(|h| pieces.iter().map(move |p| format!("{}{}", h, p))).collect();
        hays.extend(longer);
    }
    let mut seen = 0;
    for hay in &hays {
        let found = WORDS.found_in(hay);
        for (k, p) in patterns.iter().enumerate() {
            assert_eq!(found & (1 << k) != 0, hay.contains(p), "{:?} in {:?}", p, hay);
        }
        seen |= found;
        assert_eq!(WORDS.found_among(hay, 0b1010_0101), found & 0b1010_0101, "{:?}", hay);
    }
    assert_eq!(seen, (1 << patterns.len()) - 1);
}

#[test]
fn words_are_found_in_any_case_as_in_a_lowercased_copy() {
    const WORDS: Words<6> = Words::new(["ab", "b", "abc", "status:", "é", "cancel"]);
    let pieces = ["", "a", "A", "b", "B", "c", "C", "é", "É", "status", "STATUS", "Status", ":", "cancel", "CANCEL", "x"];
    let mut hays = vec![String::new()];
    for _ in 0..3 {
        let longer: Vec<String> = hays.iter().flat_map(|h| pieces.iter().map(move |p| format!("{}{}", h, p))).collect();
        hays.extend(longer);
    }
    let (mut seen, mut differs) = (0, false);
    for hay in &hays {
        let lower = hay.to_ascii_lowercase();
        let found = WORDS.found_in_any_case(hay);
        assert_eq!(found, WORDS.found_in(&lower), "{:?}", hay);
        assert_eq!(WORDS.found_among_any_case(hay, 0b10_0101), found & 0b10_0101, "{:?}", hay);
        seen |= found;
        differs |= found != WORDS.found_in(hay);
    }
    // Every word found, and some only by reading in any case.
    assert_eq!(seen, (1 << 6) - 1);
    assert!(differs);
}

#[test]
fn a_borrowed_string_is_owned_with_every_byte_of_every_length() {
    let text: String = "abcdefghijklmnopqrstuvwxyz0123456789é€😀ABCDEFGHIJKLMNOPQRSTUVWXYZ!?".repeat(2);
    for from in 0..8 {
        for to in from..text.len() {
            if let Some(s) = text.get(from..to) {
                let owned = crate::lenient::Field::Str(s).into_string().unwrap();
                assert_eq!(owned, s);
                assert_eq!(owned.len(), s.len());
            }
        }
    }
}

#[test]
fn cutting_counts_characters_not_bytes() {
    assert_eq!(cut_chars("ééé", 2), "éé");
    assert_eq!(cut_chars("ab", 5), "ab");
    match note_unreadable("p: ", &"é".repeat(1000)) {
        Event::Note(n) => assert_eq!(n.chars().count(), NOTE_MAX_CHARS),
        other => panic!("{:?}", other),
    }
}

#[test]
fn cutting_at_the_boundary_keeps_exactly_max_characters() {
    assert_eq!(cut_chars("ab", 2), "ab");
    assert_eq!(cut_chars("abc", 2), "ab");
    assert_eq!(cut_chars("éa", 2), "éa");
    assert_eq!(cut_chars("éab", 2), "éa");
    assert_eq!(cut_chars("", 0), "");
    let line = "x".repeat(600);
    match note_unreadable("p: ", &line) {
        Event::Note(n) => assert_eq!(n, format!("p: {}", &line[..NOTE_MAX_CHARS - 3])),
        other => panic!("{:?}", other),
    }
    match note_unreadable("p: ", "short") {
        Event::Note(n) => assert_eq!(n, "p: short"),
        other => panic!("{:?}", other),
    }
}

#[test]
fn first_and_last_lines_skip_blank_lines() {
    assert_eq!(first_line("\n  hello \nworld", 200), "hello");
    assert_eq!(last_line("a\nb\n\n", 200), "b");
}

#[test]
fn config_helpers_refuse_wrong_shapes() {
    assert!(config_object(&Some("{".into())).is_err());
    assert!(config_object(&Some("3".into())).is_err());
    assert!(config_object(&Some("null".into())).unwrap().is_empty());
    let c = config_object(&Some(r#"{"env":{"A=B":"x"}}"#.into())).unwrap();
    assert!(config_env(&c).is_err());
    let c = config_object(&Some(r#"{"env":{"A":1}}"#.into())).unwrap();
    assert!(config_env(&c).is_err());
    let c = config_object(&Some(r#"{"n":-1,"b":"yes","l":[1]}"#.into())).unwrap();
    assert!(config_u64(&c, "n").is_err());
    assert!(config_bool(&c, "b", false).is_err());
    assert!(config_string_list(&c, "l").is_err());
}

#[test]
fn tool_prefixes_are_stripped_only_for_the_bridge_tools() {
    let prefixes = vec!["mcp__murmur__".to_owned()];
    let tools = vec!["echo".to_owned()];
    assert_eq!(strip_tool_prefix("mcp__murmur__echo", &prefixes, &tools), "echo");
    assert_eq!(strip_tool_prefix("mcp__murmur__other", &prefixes, &tools), "mcp__murmur__other");
    assert_eq!(strip_tool_prefix("Bash", &prefixes, &tools), "Bash");
}

#[test]
fn default_exit_classification_is_canceled_then_signal_then_harness_error() {
    let mut exit = ExitStatus { code: Some(0), signal: None, stderr_tail: String::new(), interrupted: true, saw_terminal: false };
    assert!(matches!(classify_exit_default("h", &exit), Event::TurnFailed(f) if f.kind == FailureKind::Canceled));
    exit.interrupted = false;
    exit.code = None;
    exit.signal = Some(9);
    assert!(matches!(classify_exit_default("h", &exit), Event::TurnFailed(f) if f.kind == FailureKind::Other && f.message.contains("signal 9")));
    exit.signal = None;
    exit.code = Some(0);
    assert!(matches!(classify_exit_default("h", &exit), Event::TurnFailed(f) if f.kind == FailureKind::HarnessError));
}

#[test]
fn control_sequences_are_stripped_from_what_a_person_is_shown() {
    // Gemini CLI colours its stderr; the message must not carry the escape codes.
    assert_eq!(strip_controls("\u{1b}[31mInvalid auth method selected.\u{1b}[39m"), "Invalid auth method selected.");
    assert_eq!(strip_controls("a\u{1b}[1;2Hb\u{1b}]0;title\u{7}c\u{1b}]8;;x\u{1b}\\d\u{1b}Me"), "abcde");
    assert_eq!(strip_controls("tab\tnew\nline\r\u{0}\u{85}\u{7f}"), "tab\tnew\nline");
    assert_eq!(strip_controls("unterminated \u{1b}[31"), "unterminated ");
    assert_eq!(strip_controls("Grüße ✓"), "Grüße ✓");
    assert_eq!(last_line("first\n\u{1b}[31mError: denied\u{1b}[0m\r\n\n", 300), "Error: denied");
    assert_eq!(first_line("\u{1b}[2K\n\u{1b}[33mNot logged in\u{1b}[0m\n", 200), "Not logged in");
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct LenientProbe<'a> {
    #[serde(borrow)]
    n: crate::lenient::Field<'a>,
    m: crate::lenient::Member<LenientInner>,
    j: crate::lenient::Json,
}

#[derive(serde::Deserialize, Default, Debug, PartialEq)]
#[serde(default)]
struct LenientInner {
    a: u64,
}

#[test]
fn lenient_members_answer_as_the_value_accessors_do() {
    use crate::lenient::{object_line, Member};
    fn probe(line: &str) -> LenientProbe<'_> {
        object_line(line).unwrap()
    }
    for (line, expected) in [
        (r#"{"n":-3}"#, Some(-3)),
        (r#"{"n":7}"#, Some(7)),
        (r#"{"n":9223372036854775808}"#, None),
        (r#"{"n":2.0}"#, None),
        (r#"{"n":"7"}"#, None),
    ] {
        let value: Value = serde_json::from_str(line).unwrap();
        assert_eq!(probe(line).n.as_i64(), expected, "{}", line);
        assert_eq!(value["n"].as_i64(), expected, "{}", line);
    }
    assert_eq!(probe("{}").m, Member::Absent);
    assert_eq!(probe(r#"{"m":null}"#).m, Member::Other);
    assert_eq!(probe(r#"{"m":[{"a":1}]}"#).m, Member::Other);
    assert_eq!(probe(r#"{"m":{"a":1,"b":[2]}}"#).m, Member::Object(LenientInner { a: 1 }));
    assert!(!probe("{}").m.is_present() && probe(r#"{"m":0}"#).m.is_present());
    assert_eq!(probe("{}").j.get(), None);
    assert_eq!(probe(r#"{"j":null}"#).j.get(), Some(&Value::Null));
    assert_eq!(probe(r#"{"j":{"b":1,"a":[true]}}"#).j.get().map(Value::to_string), Some(r#"{"b":1,"a":[true]}"#.to_owned()));
}

mod small_blocks {
    use crate::small_alloc::{SmallBlocks, MAX_SMALL};
    use std::alloc::{GlobalAlloc, Layout, System};

    /// A block's bytes, written when it is allocated and checked when it is freed or grown.
    struct Live {
        ptr: *mut u8,
        layout: Layout,
        fill: u8,
    }

    fn check(live: &Live) {
        for i in 0..live.layout.size() {
            assert_eq!(unsafe { *live.ptr.add(i) }, live.fill, "block {:p} byte {} was overwritten", live.ptr, i);
        }
    }

    fn fill(live: &Live) {
        unsafe { live.ptr.write_bytes(live.fill, live.layout.size()) };
    }

    #[test]
    fn blocks_of_every_size_keep_their_bytes_through_allocation_frees_and_growth() {
        let heap = SmallBlocks::new(System);
        let mut live: Vec<Live> = Vec::new();
        // A fixed xorshift sequence: sizes across the small classes and beyond, alignments 1-32.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for step in 0..20_000u32 {
            let r = next();
            let fill_byte = (step % 251) as u8 + 1;
            match r % 5 {
                0 | 1 => {
                    let size = 1 + (next() % (MAX_SMALL as u64 * 3)) as usize;
                    let align = 1usize << (next() % 6);
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let zeroed = r % 10 == 1;
                    let ptr = unsafe { if zeroed { heap.alloc_zeroed(layout) } else { heap.alloc(layout) } };
                    assert!(!ptr.is_null());
                    assert_eq!(ptr as usize % align, 0, "misaligned block for {:?}", layout);
                    if zeroed {
                        assert!((0..size).all(|i| unsafe { *ptr.add(i) } == 0), "a zeroed block held bytes");
                    }
                    for other in &live {
                        let (a, b) = (ptr as usize, other.ptr as usize);
                        assert!(a + size <= b || b + other.layout.size() <= a, "blocks overlap");
                    }
                    let block = Live { ptr, layout, fill: fill_byte };
                    fill(&block);
                    live.push(block);
                }
                2 | 3 if !live.is_empty() => {
                    let block = live.swap_remove((next() % live.len() as u64) as usize);
                    check(&block);
                    unsafe { heap.dealloc(block.ptr, block.layout) };
                }
                4 if !live.is_empty() => {
                    let at = (next() % live.len() as u64) as usize;
                    check(&live[at]);
                    let new_size = 1 + (next() % (MAX_SMALL as u64 * 3)) as usize;
                    let old = &live[at];
                    let ptr = unsafe { heap.realloc(old.ptr, old.layout, new_size) };
                    assert!(!ptr.is_null());
                    let kept = old.layout.size().min(new_size);
                    assert!((0..kept).all(|i| unsafe { *ptr.add(i) } == old.fill), "growth lost the contents");
                    let block = Live { ptr, layout: Layout::from_size_align(new_size, old.layout.align()).unwrap(), fill: fill_byte };
                    fill(&block);
                    live[at] = block;
                }
                _ => {}
            }
        }
        for block in live.drain(..) {
            check(&block);
            unsafe { heap.dealloc(block.ptr, block.layout) };
        }
    }

    #[test]
    fn a_freed_small_block_is_reused_for_its_size_class_only() {
        let heap = SmallBlocks::new(System);
        let small = Layout::from_size_align(40, 1).unwrap();
        let same_class = Layout::from_size_align(48, 8).unwrap();
        let other_class = Layout::from_size_align(49, 1).unwrap();
        unsafe {
            let a = heap.alloc(small);
            heap.dealloc(a, small);
            let b = heap.alloc(other_class);
            assert_ne!(a, b, "a block went to another size class");
            let c = heap.alloc(same_class);
            assert_eq!(a, c, "the freed block of the class was not reused");
            heap.dealloc(b, other_class);
            heap.dealloc(c, same_class);
        }
    }
}

mod in_place {
    use crate::lenient::*;
    use crate::util::json_text;
    use serde::de::MapAccess;
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default)]
    struct Inner<'a> {
        #[serde(borrow)]
        n: Field<'a>,
    }

    /// The same members read by the derived visitor.
    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default)]
    struct Derived<'a> {
        #[serde(rename = "type", borrow)]
        kind: Field<'a>,
        #[serde(borrow)]
        a_longer_name: Field<'a>,
        #[serde(borrow)]
        inner: Member<Inner<'a>>,
        whole: Json,
    }

    /// ... and in place.
    #[derive(Default, Debug, PartialEq)]
    struct InPlace<'a> {
        kind: Field<'a>,
        a_longer_name: Field<'a>,
        inner: Member<Inner<'a>>,
        whole: Json,
    }

    impl<'de> ReadInPlace<'de> for InPlace<'de> {
        fn member_index(name: &str) -> Option<u32> {
            if name_is(name, "type") {
                Some(0)
            } else if name_is(name, "a_longer_name") {
                Some(1)
            } else if name_is(name, "inner") {
                Some(2)
            } else if name_is(name, "whole") {
                Some(3)
            } else {
                None
            }
        }

        fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
            match index {
                0 => self.kind = map.next_value()?,
                1 => self.a_longer_name = map.next_value()?,
                2 => self.inner = map.next_value()?,
                _ => self.whole = map.next_value()?,
            }
            Ok(())
        }
    }

    fn both(line: &str) -> (Option<InPlace>, Option<InPlace>) {
        let derived = object_line::<Derived>(line)
            .map(|d| InPlace { kind: d.kind, a_longer_name: d.a_longer_name, inner: d.inner, whole: d.whole });
        let mut target = InPlace::default();
        let in_place = if object_line_into(line, &mut target) { Some(target) } else { None };
        (derived, in_place)
    }

    #[test]
    fn reading_in_place_answers_as_the_derived_struct_on_every_kind_of_line() {
        let lines = [
            r#"{"type":"a","a_longer_name":1,"inner":{"n":2},"whole":{"x":[1,2.5,"é"]}}"#,
            r#"  {"type":"a"}  "#,
            r#"{"type":"a","type":"b"}"#,
            r#"{"type":"a","ty\u0070e":"b"}"#,
            r#"{"ty\u0070e":"escaped name"}"#,
            r#"{"a_longer_name":"x","a_longer_name":"y"}"#,
            r#"{"a_longer_nam":"near","a_longer_namf":"miss","typ":1,"types":2}"#,
            r#"{"unknown":1,"unknown":2,"type":null}"#,
            r#"{"inner":null,"whole":null}"#,
            r#"{"inner":[1],"whole":1e400}"#,
            r#"{"inner":{"n":1,"n":2}}"#,
            r#"{"whole":{"k":1,"k":2}}"#,
            r#"{"type":"a"} x"#,
            r#"{"type":"a""#,
            r#"["a"]"#,
            r#""type""#,
            r#"{}"#,
            r#""#,
            r#"{"type":"a\"b","deep":[[[[[[[[]]]]]]]]}"#,
        ];
        for line in lines {
            let (derived, in_place) = both(line);
            assert_eq!(derived, in_place, "on {}", line);
        }
        // Every line above that reads names a member that decides the outcome of another.
        assert!(both(r#"{"type":"a","type":"b"}"#).1.is_none());
        assert_eq!(both(r#"{"ty\u0070e":"escaped name"}"#).1.unwrap().kind.as_str(), Some("escaped name"));
    }

    #[test]
    fn names_compare_equal_only_to_the_same_bytes() {
        for (a, b, same) in [
            ("type", "type", true),
            ("typf", "type", false),
            ("a_longer_name", "a_longer_name", true),
            ("a_longer_namf", "a_longer_name", false),
            ("b_longer_name", "a_longer_name", false),
            ("", "", true),
            ("ab", "abc", false),
            ("exactly8", "exactly8", true),
            ("exactly9", "exactly8", false),
        ] {
            assert_eq!(name_is(a, b), same, "{} vs {}", a, b);
        }
    }

    #[test]
    fn json_text_writes_what_to_string_writes() {
        for text in [r#"{"b":1,"a":[true,null,2.5,-3,"é\n\"x\"\u0001"],"c":{}}"#, "1e300", r#""\ud83d\ude00""#, "[]"] {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(json_text(&v), v.to_string());
        }
    }
}
