use super::*;
use murmur_driver_abi::testing::*;

fn golden(name: &str, terminals: usize) {
    let events = check_transcript::<JsonlDriver>("jsonl", name, terminals);
    assert_golden("jsonl", name, &events);
}

#[test]
fn happy_transcript_matches_its_golden_events() {
    golden("happy", 1);
}

#[test]
fn tools_transcript_matches_its_golden_events() {
    golden("tools", 1);
}

#[test]
fn error_transcript_matches_its_golden_events() {
    golden("error", 1);
}

#[test]
fn launch_writes_one_turn_line_and_closes_stdin() {
    let mut driver = JsonlDriver::default();
    let plan = driver.launch(&golden_launch_request()).unwrap();
    assert!(plan.args.is_empty());
    assert!(!plan.keep_stdin_open);
    assert_eq!(plan.interrupt_stdin, None);
    let stdin = String::from_utf8(plan.stdin.unwrap()).unwrap();
    assert!(stdin.ends_with('\n') && stdin.matches('\n').count() == 1);
    let turn: Value = serde_json::from_str(stdin.trim_end()).unwrap();
    assert_eq!(turn["type"], "turn");
    assert_eq!(turn["task"], "Say hello.");
    assert_eq!(turn["system"], "You are a golden test.");
    assert_eq!(turn["session"], json!({"id": "00000000-0000-4000-8000-000000000000", "mode": "new"}));
    assert_eq!(turn["bridge"]["token"], "golden-token");
    assert_eq!(turn["bridge"]["tools"], json!(["echo"]));
}

#[test]
fn launch_takes_args_and_env_from_config_and_refuses_unknown_keys() {
    let mut request = golden_launch_request();
    request.config = Some(r#"{"binary_args":["--quiet"],"env":{"AGENT_MODE":"test"}}"#.to_owned());
    let plan = JsonlDriver::default().launch(&request).unwrap();
    assert_eq!(plan.args, vec!["--quiet"]);
    assert_eq!(plan.env_set, vec![("AGENT_MODE".to_owned(), "test".to_owned())]);
    request.config = Some(r#"{"binary_arg":[]}"#.to_owned());
    assert!(JsonlDriver::default().launch(&request).unwrap_err().contains("binary_arg"));
    request.config = Some("[1]".to_owned());
    assert!(JsonlDriver::default().launch(&request).is_err());
}

#[test]
fn usage_split_adds_thinking_back_into_output_and_keeps_absent_members_unreported() {
    let usage_json = |text: &'static str| {
        let mut usage = parse::UsageSplit::default();
        assert!(murmur_driver_abi::lenient::object_line_into(text, &mut usage));
        usage
    };
    let usage = usage_split(&usage_json(r#"{"fresh_input": 5, "output": 3, "thinking": 2}"#));
    assert_eq!(
        usage,
        Usage { input: Some(5), output: Some(5), cache_read: None, cache_creation: None, thinking: Some(2) }
    );
    assert_eq!(usage_split(&usage_json("{}")), Usage::default());
}

#[test]
fn unknown_and_unreadable_lines_become_cut_notes() {
    let mut driver = JsonlDriver::default();
    let long = format!("{{\"type\":\"mystery\",\"pad\":\"{}\"}}", "x".repeat(2000));
    let events = driver.parse(&["not json".to_owned(), long, String::new()]);
    assert_eq!(events.len(), 2);
    for event in &events {
        match event {
            Event::Note(n) => assert!(n.chars().count() <= NOTE_MAX_CHARS),
            other => panic!("expected a note, got {:?}", other),
        }
    }
}

#[test]
fn a_program_note_is_forwarded_as_a_note() {
    let events = JsonlDriver::default().parse(&[r#"{"type":"note","text":"warming up"}"#.to_owned()]);
    assert_eq!(events, vec![Event::Note("warming up".to_owned())]);
}

#[test]
fn error_kinds_map_to_failure_kinds() {
    for (kind, expected) in [
        ("auth", FailureKind::Auth),
        ("quota", FailureKind::Quota),
        ("max_turns", FailureKind::MaxTurns),
        ("max-turns", FailureKind::MaxTurns),
        ("canceled", FailureKind::Canceled),
        ("harness_error", FailureKind::HarnessError),
        ("anything", FailureKind::Other),
    ] {
        assert_eq!(failure_kind(kind), expected, "{}", kind);
    }
}

#[test]
fn a_second_terminal_line_is_noted_not_repeated() {
    let mut driver = JsonlDriver::default();
    let events = driver.parse(&[r#"{"type":"result","text":"a"}"#.to_owned(), r#"{"type":"result","text":"b"}"#.to_owned()]);
    assert_eq!(events[0], Event::TurnEnd("a".to_owned()));
    assert!(matches!(events[1], Event::Note(_)));
}

#[test]
fn classify_exit_is_canceled_when_interrupted_and_a_harness_error_otherwise() {
    let mut driver = JsonlDriver::default();
    let mut exit = ExitStatus { code: Some(0), signal: None, stderr_tail: String::new(), interrupted: true, saw_terminal: false };
    assert!(matches!(driver.classify_exit(&exit), Event::TurnFailed(TurnFailure { kind: FailureKind::Canceled, .. })));
    exit.interrupted = false;
    exit.code = Some(3);
    exit.stderr_tail = "boom\nlast words\n".to_owned();
    match driver.classify_exit(&exit) {
        Event::TurnFailed(f) => {
            assert_eq!(f.kind, FailureKind::HarnessError);
            assert!(f.message.contains("code 3") && f.message.ends_with("last words"), "{}", f.message);
        }
        other => panic!("{:?}", other),
    }
}

#[test]
fn describe_has_no_login_command_and_no_required_env() {
    let d = JsonlDriver::describe();
    assert!(matches!(d.login_check, LoginCheck::Unavailable(_)));
    assert!(d.required_env.is_empty());
    assert_eq!(d.interrupt, InterruptMethod::SignalInt);
}

#[test]
fn damaged_and_truncated_lines_never_panic() {
    assert_survives_damaged_lines::<JsonlDriver>("jsonl", &["happy", "tools", "error"]);
}

/// `failure_kind` as it was written first (a `String` with `-` replaced by `_`, then matched): the
/// oracle for the comparison in place.
fn failure_kind_by_replace(kind: &str) -> FailureKind {
    match kind.replace('-', "_").as_str() {
        "auth" => FailureKind::Auth,
        "quota" => FailureKind::Quota,
        "max_turns" => FailureKind::MaxTurns,
        "canceled" | "cancelled" => FailureKind::Canceled,
        "harness_error" => FailureKind::HarnessError,
        _ => FailureKind::Other,
    }
}

#[test]
fn error_kinds_read_in_place_as_the_replacing_reading_did() {
    let words = ["auth", "quota", "max_turns", "canceled", "cancelled", "harness_error", "other", ""];
    let mut kinds: Vec<String> = Vec::new();
    for word in words {
        kinds.push(word.to_owned());
        kinds.push(word.replace('_', "-"));
        kinds.push(word.to_ascii_uppercase());
        kinds.push(format!("{word}-"));
        kinds.push(format!("_{word}"));
        if !word.is_empty() {
            kinds.push(word[..word.len() - 1].to_owned());
        }
        // Each byte in turn made `-`, `_`, `x` or a two-byte character.
        for i in 0..word.len() {
            for with in ["-", "_", "x", "é"] {
                kinds.push(format!("{}{}{}", &word[..i], with, &word[i + 1..]));
            }
        }
    }
    let mut kinds_seen = std::collections::HashSet::new();
    for kind in &kinds {
        let expected = failure_kind_by_replace(kind);
        kinds_seen.insert(format!("{expected:?}"));
        assert_eq!(failure_kind(kind), expected, "{:?}", kind);
    }
    // Every kind came out at least once: the comparison is not vacuous.
    assert_eq!(kinds_seen.len(), 6, "{:?}", kinds_seen);
}
