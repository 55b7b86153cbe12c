use super::parse::*;
use super::*;
use murmur_driver_abi::testing::*;

fn golden(name: &str, terminals: usize) -> Vec<Event> {
    let events = check_transcript::<ClaudeCodeDriver>("claude-code", name, terminals);
    assert_golden("claude-code", name, &events);
    events
}

fn failure(events: &[Event]) -> TurnFailure {
    match events.iter().find(|e| e.is_terminal()) {
        Some(Event::TurnFailed(f)) => f.clone(),
        other => panic!("expected turn-failed, got {:?}", other),
    }
}

#[test]
fn happy_transcript_streams_text_then_ends_the_turn() {
    let events = golden("happy", 1);
    assert_eq!(events.last(), Some(&Event::TurnEnd("Hello from the fake model.".to_owned())));
    assert!(matches!(&events[0], Event::SessionStarted(s) if s.auth == "api-key"));
}

#[test]
fn mcp_transcript_strips_the_mcp_prefix_and_reports_cumulative_input_bytes() {
    let events = golden("mcp", 1);
    let started = events.iter().find_map(|e| match e { Event::ToolCallStarted(s) => Some(s.clone()), _ => None });
    assert_eq!(started, Some(ToolCallStart { id: "toolu_fake_01".to_owned(), name: "echo".to_owned() }));
    let progress: Vec<u64> =
        events.iter().filter_map(|e| match e { Event::ToolCallProgress(p) => Some(p.input_bytes), _ => None }).collect();
    assert_eq!(progress, vec![8, 32]);
    assert!(events.contains(&Event::ToolCall(ToolCallInfo {
        id: "toolu_fake_01".to_owned(),
        name: "echo".to_owned(),
        input: "{\"text\":\"ping from fake model\"}".to_owned(),
    })));
    assert!(events.contains(&Event::ToolResult(ToolResultInfo {
        id: "toolu_fake_01".to_owned(),
        output: "echo: ping from fake model".to_owned(),
        is_error: false,
    })));
}

#[test]
fn thinking_transcript_streams_and_completes_thinking() {
    let events = golden("thinking", 1);
    assert!(events.iter().any(|e| matches!(e, Event::ThinkingDelta(_))));
    assert!(events.contains(&Event::Thinking("The user wants a greeting. I will think briefly, then answer.".to_owned())));
}

#[test]
fn auth401_transcript_retries_then_fails_with_kind_auth() {
    let events = golden("auth401", 1);
    let retries: Vec<u32> = events.iter().filter_map(|e| match e { Event::Retry(r) => Some(r.attempt), _ => None }).collect();
    assert_eq!(retries, vec![1, 2]);
    assert_eq!(failure(&events).kind, FailureKind::Auth);
    assert!(!events.iter().any(|e| matches!(e, Event::Text(_))), "the synthetic error message is not agent text");
}

#[test]
fn rate429_transcript_retries_then_succeeds() {
    let events = golden("rate429", 1);
    assert!(events.iter().any(|e| matches!(e, Event::Retry(r) if r.reason.contains("HTTP 429"))));
    assert!(matches!(events.last(), Some(Event::TurnEnd(_))));
}

#[test]
fn interrupt_transcript_fails_with_kind_canceled() {
    let events = golden("interrupt", 1);
    assert_eq!(failure(&events).kind, FailureKind::Canceled);
}

#[test]
fn twoturn_transcript_sums_usage_across_results_and_reports_one_session() {
    // The recorder wrote a second user line, so the harness ran two turns and printed two
    // results; each result's usage covers its own turn only, so the driver sums them.
    let events = golden("twoturn", 2);
    let usages: Vec<Usage> = events.iter().filter_map(|e| match e { Event::Usage(u) => Some(*u), _ => None }).collect();
    assert_eq!(usages[0].input, Some(101));
    assert_eq!(usages[1], Usage { input: Some(203), output: Some(20), cache_read: Some(0), cache_creation: Some(0), thinking: Some(0) });
    assert_eq!(events.iter().filter(|e| matches!(e, Event::SessionStarted(_))).count(), 1);
}

/// A line read into the driver's `Line` as `parse` reads it.
fn parsed_line(line: &str) -> crate::parse::Line<'_> {
    let mut v = crate::parse::Line::default();
    assert!(murmur_driver_abi::lenient::object_line_into(line, &mut v), "unreadable: {}", line);
    v
}

fn result_line(fields: &str) -> String {
    format!("{{\"type\":\"result\",{}}}", fields)
}

#[test]
fn result_classification_follows_status_then_terminal_reason_then_subtype() {
    let cases = [
        (r#""is_error":false,"subtype":"success","result":"ok""#, None),
        (r#""is_error":true,"api_error_status":401,"result":"x""#, Some(FailureKind::Auth)),
        (r#""is_error":true,"api_error_status":403,"result":"x""#, Some(FailureKind::Auth)),
        (r#""is_error":true,"api_error_status":429,"result":"x""#, Some(FailureKind::Quota)),
        (r#""is_error":true,"api_error_status":null,"terminal_reason":"aborted_streaming""#, Some(FailureKind::Canceled)),
        (r#""is_error":true,"subtype":"error_max_turns","terminal_reason":"max_turns""#, Some(FailureKind::MaxTurns)),
        (r#""is_error":true,"api_error_status":529,"result":"overloaded""#, Some(FailureKind::HarnessError)),
        (r#""is_error":true,"api_error_status":null,"result":"connection refused""#, Some(FailureKind::HarnessError)),
    ];
    for (fields, expected) in cases {
        let line = result_line(fields);
        match (classify_result(&mut parsed_line(&line)), expected) {
            (Event::TurnEnd(text), None) => assert_eq!(text, "ok"),
            (Event::TurnFailed(f), Some(kind)) => {
                assert_eq!(f.kind, kind, "{}", fields);
                assert!(!f.message.is_empty());
            }
            (other, _) => panic!("{} gave {:?}", fields, other),
        }
    }
}

#[test]
fn usage_keeps_unreported_members_apart_from_zero() {
    let mut usage = UsageJson::default();
    assert!(murmur_driver_abi::lenient::object_line_into(r#"{"input_tokens": 5, "output_tokens": 7}"#, &mut usage));
    let usage = usage_of(&usage);
    assert_eq!(usage, Usage { input: Some(5), output: Some(7), cache_read: None, cache_creation: None, thinking: None });
    assert_eq!(usage.plus(Usage::default()), usage);
}

#[test]
fn auth_is_subscription_only_when_no_api_key_is_in_use() {
    assert_eq!(auth_of(Some("none")), "subscription");
    assert_eq!(auth_of(Some("ANTHROPIC_API_KEY")), "api-key");
    assert_eq!(auth_of(Some("/login managed key")), "api-key");
    assert_eq!(auth_of(None), "unknown");
}

#[test]
fn rate_limit_events_merge_into_named_windows() {
    let mut driver = ClaudeCodeDriver::default();
    let five = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1771390800,"rateLimitType":"five_hour","utilization":42}}"#;
    let week = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","rateLimitType":"seven_day","utilization":0.9}}"#;
    let five_again = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","rateLimitType":"five_hour"}}"#;
    let events = driver.parse(&[five.to_owned(), week.to_owned(), five_again.to_owned()]);
    let last = match events.last() { Some(Event::Quota(w)) => w.clone(), other => panic!("{:?}", other) };
    assert_eq!(last.len(), 2);
    assert_eq!(last[0], QuotaWindow { name: "five-hour".to_owned(), used: None, resets_at: None, window_minutes: Some(300), state: Some(QuotaState::Exhausted) });
    assert_eq!(last[1].name, "seven-day");
    assert_eq!(last[1].used, Some(0.9));
    assert_eq!(last[1].window_minutes, Some(10080));
    match &events[0] {
        Event::Quota(w) => {
            assert_eq!(w[0].resets_at, Some(1_771_390_800_000));
            assert_eq!(w[0].used, Some(0.42));
        }
        other => panic!("{:?}", other),
    }
}

#[test]
fn unknown_lines_become_notes_cut_at_512_characters() {
    let mut driver = ClaudeCodeDriver::default();
    let long = format!("{{\"type\":\"brand_new\",\"x\":\"{}\"}}", "y".repeat(3000));
    let events = driver.parse(&[long, "plain text".to_owned(), String::new()]);
    assert_eq!(events.len(), 2);
    for e in events {
        match e {
            Event::Note(n) => assert!(n.chars().count() <= 512),
            other => panic!("{:?}", other),
        }
    }
}

fn request() -> LaunchRequest {
    golden_launch_request()
}

#[test]
fn launch_with_a_bridge_names_its_tools_and_keeps_the_token_out_of_argv() {
    let plan = plan(&request()).unwrap();
    let args = plan.args.join(" ");
    assert!(!args.contains("golden-token"), "{}", args);
    assert!(plan.env_set.iter().all(|(_, v)| !v.contains("golden-token")));
    assert_eq!(&plan.args[..9], &["--print", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--include-partial-messages", "--setting-sources", ""]);
    assert!(plan.args.contains(&"--session-id=00000000-0000-4000-8000-000000000000".to_owned()));
    assert!(plan.args.contains(&"--system-prompt=You are a golden test.".to_owned()));
    assert!(plan.args.contains(&"--mcp-config={files_dir}/mcp-config.json".to_owned()));
    assert!(plan.args.contains(&"--strict-mcp-config".to_owned()));
    let tools = plan.args.iter().position(|a| a == "--tools").unwrap();
    assert_eq!(plan.args[tools + 1], "mcp__murmur__echo");
    assert_eq!(plan.files.len(), 1);
    let config: Value = serde_json::from_str(&plan.files[0].contents).unwrap();
    assert_eq!(config["mcpServers"]["murmur"]["url"], "http://127.0.0.1:8767/mcp");
    assert_eq!(config["mcpServers"]["murmur"]["headers"]["Authorization"], "Bearer golden-token");
    assert!(plan.keep_stdin_open);
    let stdin = String::from_utf8(plan.stdin.unwrap()).unwrap();
    assert_eq!(stdin, "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Say hello.\"}]}}\n");
    let interrupt: Value = serde_json::from_slice(&plan.interrupt_stdin.unwrap()).unwrap();
    assert_eq!(interrupt["type"], "control_request");
    assert_eq!(interrupt["request"]["subtype"], "interrupt");
}

#[test]
fn launch_without_a_bridge_gives_no_tools_and_writes_no_files() {
    let mut r = request();
    r.bridge = None;
    let plan = plan(&r).unwrap();
    let tools = plan.args.iter().position(|a| a == "--tools").unwrap();
    assert_eq!(plan.args[tools + 1], "");
    assert!(plan.files.is_empty());
    assert!(!plan.args.iter().any(|a| a.starts_with("--mcp-config")));
}

#[test]
fn launch_joins_values_with_equals_so_a_dash_cannot_become_a_flag() {
    let mut r = request();
    r.model = Some("-evil".to_owned());
    r.session = Session { id: "--dangerous".to_owned(), mode: SessionMode::Resume };
    r.system_prompt = "-p".to_owned();
    let plan = plan(&r).unwrap();
    assert!(plan.args.contains(&"--model=-evil".to_owned()));
    assert!(plan.args.contains(&"--resume=--dangerous".to_owned()));
    assert!(plan.args.contains(&"--system-prompt=-p".to_owned()));
    assert!(!plan.args.iter().any(|a| a.starts_with("--session-id")));
}

#[test]
fn launch_defaults_are_sandbox_bypass_and_quiet_and_config_overrides_them() {
    let default = plan(&request()).unwrap();
    assert!(default.args.contains(&"--permission-mode=bypassPermissions".to_owned()));
    assert!(default.env_set.contains(&("IS_SANDBOX".to_owned(), "1".to_owned())));
    assert!(default.env_set.contains(&("DISABLE_TELEMETRY".to_owned(), "1".to_owned())));
    let mut r = request();
    r.config = Some(r#"{"permission_mode":"acceptEdits","max_retries":2,"max_turns":5,"is_sandbox":false,"telemetry":true,"env":{"FOO":"bar"},"extra_args":["--debug"]}"#.to_owned());
    let p = plan(&r).unwrap();
    assert!(p.args.contains(&"--permission-mode=acceptEdits".to_owned()));
    assert!(p.args.contains(&"--max-turns=5".to_owned()));
    assert_eq!(p.args.last().unwrap(), "--debug");
    assert_eq!(p.env_set, vec![("CLAUDE_CODE_MAX_RETRIES".to_owned(), "2".to_owned()), ("FOO".to_owned(), "bar".to_owned())]);
    r.config = Some(r#"{"max_retry":2}"#.to_owned());
    assert!(plan(&r).unwrap_err().contains("max_retry"));
}

#[test]
fn read_login_reads_logged_in_from_the_json() {
    let out = |code: Option<i32>, stdout: &str| LoginOutput { exit_code: code, stdout: stdout.to_owned(), stderr: String::new() };
    assert_eq!(read_login(&out(Some(0), "{\n  \"loggedIn\": true,\n  \"authMethod\": \"claude.ai\"\n}\n")), LoginState::LoggedIn);
    match read_login(&out(Some(1), "{\n  \"loggedIn\": false\n}\n")) {
        LoginState::LoggedOut(reason) => assert!(reason.contains("claude auth login")),
        other => panic!("{:?}", other),
    }
    assert!(matches!(read_login(&out(Some(1), "")), LoginState::LoggedOut(_)));
    assert!(matches!(read_login(&out(Some(0), "garbage")), LoginState::Unknown(_)));
    assert!(matches!(read_login(&out(None, "")), LoginState::Unknown(_)));
}

#[test]
fn classify_exit_prefers_canceled_then_auth_hints_then_harness_error() {
    let mut d = ClaudeCodeDriver::default();
    let exit = |code: Option<i32>, tail: &str, interrupted: bool| ExitStatus { code, signal: None, stderr_tail: tail.to_owned(), interrupted, saw_terminal: false };
    assert_eq!(failure(&[d.classify_exit(&exit(Some(1), "Invalid API key", true))]).kind, FailureKind::Canceled);
    assert_eq!(failure(&[d.classify_exit(&exit(Some(1), "Invalid API key · Please run /login", false))]).kind, FailureKind::Auth);
    let f = failure(&[d.classify_exit(&exit(Some(1), "something broke\n", false))]);
    assert_eq!(f.kind, FailureKind::HarnessError);
    assert!(f.message.contains("code 1") && f.message.contains("something broke"));
    let signalled = ExitStatus { code: None, signal: Some(9), stderr_tail: String::new(), interrupted: false, saw_terminal: false };
    assert_eq!(failure(&[d.classify_exit(&signalled)]).kind, FailureKind::Other);
}

#[test]
fn describe_matches_the_issue() {
    let d = ClaudeCodeDriver::describe();
    assert_eq!(d.binary, "claude");
    assert!(d.tested_versions.contains(&"2.1.328".to_owned()));
    assert_eq!(d.interrupt, InterruptMethod::StdinMessage);
    assert_eq!(d.required_env, vec!["HOME", "PATH"]);
    assert_eq!(d.login_check, LoginCheck::Command(vec!["auth".to_owned(), "status".to_owned(), "--json".to_owned()]));
    assert!(d.streams_text && d.reports_usage);
}

#[test]
fn damaged_and_truncated_lines_never_panic() {
    assert_survives_damaged_lines::<ClaudeCodeDriver>("claude-code", &["happy", "mcp", "thinking", "auth401", "rate429", "interrupt", "twoturn"]);
}
