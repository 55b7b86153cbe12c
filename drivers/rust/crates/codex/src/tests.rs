use super::parse::*;
use super::*;
use murmur_driver_abi::testing::*;
use serde_json::Value;

fn golden(name: &str) -> Vec<Event> {
    golden_with(name, 1)
}

fn golden_with(name: &str, terminal_events: usize) -> Vec<Event> {
    let events = check_transcript::<CodexDriver>("codex", name, terminal_events);
    assert_golden("codex", name, &events);
    events
}

#[test]
fn happy_transcript_reports_the_thread_the_message_and_usage() {
    let events = golden("happy");
    assert!(matches!(&events[0], Event::SessionStarted(s) if s.id == "01a2291b-9688-7161-8a51-c79506c04f3c"));
    assert_eq!(events.last(), Some(&Event::TurnEnd("Hello from the fake Responses model.".to_owned())));
}

#[test]
fn auth401_transcript_retries_once_then_fails_with_kind_auth() {
    let events = golden("auth401");
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Retry(r) if r.attempt == 1)).count(), 1);
    match events.last() {
        Some(Event::TurnFailed(f)) => {
            assert_eq!(f.kind, FailureKind::Auth);
            assert!(f.message.contains("401 Unauthorized"));
        }
        other => panic!("{:?}", other),
    }
}

/// Recorded by real-harness's RealCodexIT: the bridge's `echo` called over MCP, then the answer.
#[test]
fn mcp_transcript_calls_the_bridge_tool_by_its_bare_name() {
    let events = golden("mcp");
    assert!(events.iter().any(|e| matches!(e, Event::ToolCall(c) if c.id == "item_1" && c.name == "echo" && c.input == "{\"args\":[\"hello-bridge\"]}")));
    assert!(events.iter().any(|e| matches!(e, Event::ToolResult(r) if r.id == "item_1" && r.output == "hello-bridge\n" && !r.is_error)));
    assert_eq!(events.last(), Some(&Event::TurnEnd("The tool said hello-bridge.".to_owned())));
}

/// Recorded by real-harness's RealCodexIT: Codex 0.169.0's own wording after a 429.
#[test]
fn rate429_transcript_fails_with_kind_quota() {
    let events = golden("rate429");
    match events.last() {
        Some(Event::TurnFailed(f)) => {
            assert_eq!(f.kind, FailureKind::Quota);
            assert_eq!(f.message, "exceeded retry limit, last status: 429 Too Many Requests");
        }
        other => panic!("{:?}", other),
    }
}

/// SIGINT mid-stream: Codex prints nothing more and exits 1; the runtime knows it interrupted.
#[test]
fn interrupt_transcript_has_no_terminal_line_and_the_exit_is_canceled() {
    let events = golden_with("interrupt", 0);
    assert!(matches!(&events[0], Event::SessionStarted(_)));
    let mut driver = CodexDriver::default();
    let lines = murmur_driver_abi::testing::read_transcript("codex", "interrupt");
    driver.parse(&lines);
    let exit = ExitStatus { code: Some(1), signal: None, stderr_tail: String::new(), interrupted: true, saw_terminal: false };
    assert!(matches!(driver.classify_exit(&exit), Event::TurnFailed(f) if f.kind == FailureKind::Canceled));
}

#[test]
fn usage_moves_cached_tokens_out_of_input_and_reports_reasoning_as_thinking() {
    let usage_json = |text: &'static str| {
        let mut usage = UsageJson::default();
        assert!(murmur_driver_abi::lenient::object_line_into(text, &mut usage));
        usage
    };
    let usage = usage_of(&usage_json(r#"{"input_tokens": 1000, "cached_input_tokens": 600, "cache_write_input_tokens": 100, "output_tokens": 50, "reasoning_output_tokens": 20}"#));
    assert_eq!(usage, Usage { input: Some(300), output: Some(50), cache_read: Some(600), cache_creation: Some(100), thinking: Some(20) });
    let sparse = usage_of(&usage_json(r#"{"input_tokens": 10, "output_tokens": 2}"#));
    assert_eq!(sparse, Usage { input: Some(10), output: Some(2), cache_read: None, cache_creation: None, thinking: None });
}

#[test]
fn reconnecting_messages_are_retries_with_their_reason() {
    assert_eq!(
        reconnecting("Reconnecting... 2/5 (stream disconnected before completion)"),
        Some(RetryInfo { attempt: 2, reason: "stream disconnected before completion".to_owned() })
    );
    assert_eq!(reconnecting("unexpected status 401 Unauthorized"), None);
}

#[test]
fn failure_kinds_are_read_from_the_message_text() {
    for (message, kind) in [
        ("unexpected status 401 Unauthorized: bad key", FailureKind::Auth),
        ("unexpected status 403 Forbidden", FailureKind::Auth),
        ("unexpected status 429 Too Many Requests", FailureKind::Quota),
        // Codex 0.169.0's own wording after its request retries (seen against a real 429).
        ("exceeded retry limit, last status: 429 Too Many Requests", FailureKind::Quota),
        ("exceeded retry limit, last status: 401 Unauthorized", FailureKind::Auth),
        ("exceeded retry limit, last status: 500 Internal Server Error", FailureKind::HarnessError),
        ("You've hit your usage limit.", FailureKind::Quota),
        ("stream disconnected", FailureKind::HarnessError),
    ] {
        assert_eq!(failure_kind(message), kind, "{}", message);
    }
}

#[test]
fn mcp_tool_calls_of_the_bridge_carry_bare_names_and_their_results() {
    let mut driver = CodexDriver::default();
    driver.launch(&golden_launch_request()).unwrap();
    let started = r#"{"type":"item.started","item":{"id":"item_2","type":"mcp_tool_call","server":"murmur","tool":"echo","arguments":{"text":"hi"},"status":"in_progress"}}"#;
    let completed = r#"{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"murmur","tool":"echo","arguments":{"text":"hi"},"result":{"content":[{"type":"text","text":"echo: hi"}]},"status":"completed"}}"#;
    let failed = r#"{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"other","tool":"x","error":{"message":"boom"},"status":"failed"}}"#;
    let events = driver.parse(&[started.to_owned(), completed.to_owned(), failed.to_owned()]);
    assert_eq!(
        events,
        vec![
            Event::ToolCall(ToolCallInfo { id: "item_2".to_owned(), name: "echo".to_owned(), input: "{\"text\":\"hi\"}".to_owned() }),
            Event::ToolResult(ToolResultInfo { id: "item_2".to_owned(), output: "echo: hi".to_owned(), is_error: false }),
            Event::ToolResult(ToolResultInfo { id: "item_3".to_owned(), output: "boom".to_owned(), is_error: true }),
        ]
    );
}

#[test]
fn command_executions_are_tool_calls_with_their_output() {
    let mut driver = CodexDriver::default();
    let events = driver.parse(&[
        r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"","status":"in_progress"}}"#.to_owned(),
        r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":2,"status":"failed"}}"#.to_owned(),
        r#"{"type":"item.completed","item":{"id":"item_4","type":"reasoning","text":"hmm"}}"#.to_owned(),
    ]);
    assert!(matches!(&events[0], Event::ToolCall(c) if c.name == "command_execution" && c.input == "{\"command\":\"ls\"}"));
    assert!(matches!(&events[1], Event::ToolResult(r) if r.is_error && r.output == "a\n"));
    assert_eq!(events[2], Event::Thinking("hmm".to_owned()));
}

fn plan_for(f: impl FnOnce(&mut LaunchRequest)) -> Result<LaunchPlan, String> {
    let mut r = golden_launch_request();
    f(&mut r);
    plan(&r)
}

#[test]
fn launch_runs_exec_json_with_the_task_on_a_closed_stdin_and_the_token_in_env() {
    let plan = plan_for(|_| {}).unwrap();
    assert_eq!(&plan.args[..3], &["exec", "--json", "--skip-git-repo-check"]);
    assert_eq!(plan.args.last().unwrap(), "-");
    assert!(plan.args.contains(&"--sandbox=workspace-write".to_owned()));
    assert!(plan.args.contains(&"--config=developer_instructions=\"You are a golden test.\"".to_owned()));
    assert!(plan.args.contains(&"--config=mcp_servers.murmur.url=\"http://127.0.0.1:8767/mcp\"".to_owned()));
    assert!(plan.args.contains(&"--config=mcp_servers.murmur.bearer_token_env_var=\"CAPSULE_BRIDGE_TOKEN\"".to_owned()));
    assert!(plan.args.contains(&"--config=mcp_servers.murmur.required=true".to_owned()));
    assert!(plan.args.contains(&"--config=mcp_servers.murmur.default_tools_approval_mode=\"approve\"".to_owned()));
    assert!(!plan.args.iter().any(|a| a.contains("golden-token")));
    assert_eq!(plan.env_set, vec![(TOKEN_ENV.to_owned(), "golden-token".to_owned())]);
    assert_eq!(plan.stdin, Some(b"Say hello.".to_vec()));
    assert!(!plan.keep_stdin_open);
    assert_eq!(plan.interrupt_stdin, None);
}

#[test]
fn launch_resumes_with_exec_resume_and_refuses_a_dash_leading_id() {
    let plan = plan_for(|r| {
        r.session = Session { id: "01a2291b".to_owned(), mode: SessionMode::Resume };
        r.model = Some("gpt-5".to_owned());
    })
    .unwrap();
    let n = plan.args.len();
    assert_eq!(&plan.args[n - 3..], &["resume", "01a2291b", "-"]);
    assert!(plan.args.contains(&"--model=gpt-5".to_owned()));
    assert!(plan_for(|r| r.session = Session { id: "--last".to_owned(), mode: SessionMode::Resume }).is_err());
}

#[test]
fn launch_config_sets_sandbox_env_and_extra_args_and_refuses_unknown_keys() {
    let plan = plan_for(|r| {
        r.bridge = None;
        r.config = Some(r#"{"sandbox":"read-only","env":{"RUST_LOG":"warn"},"extra_args":["--oss"],"skip_git_repo_check":false}"#.to_owned());
    })
    .unwrap();
    assert!(plan.args.contains(&"--sandbox=read-only".to_owned()));
    assert!(!plan.args.contains(&"--skip-git-repo-check".to_owned()));
    assert_eq!(plan.env_set, vec![("RUST_LOG".to_owned(), "warn".to_owned())]);
    assert_eq!(&plan.args[plan.args.len() - 2..], &["--oss", "-"]);
    assert!(plan_for(|r| r.config = Some(r#"{"sandbox":"yolo"}"#.to_owned())).is_err());
    assert!(plan_for(|r| r.config = Some(r#"{"model":"x"}"#.to_owned())).is_err());
}

#[test]
fn launch_switches_codex_analytics_off_unless_telemetry_is_true() {
    let off = "--config=analytics.enabled=false".to_owned();
    assert!(plan_for(|_| {}).unwrap().args.contains(&off));
    assert!(!plan_for(|r| r.config = Some(r#"{"telemetry":true}"#.to_owned())).unwrap().args.contains(&off));
    assert!(plan_for(|r| r.config = Some(r#"{"telemetry":"no"}"#.to_owned())).is_err());
}

#[test]
fn http_statuses_are_read_after_the_word_status() {
    assert_eq!(http_status("exceeded retry limit, last status: 429 too many requests"), Some(429));
    assert_eq!(http_status("unexpected status 401 unauthorized"), Some(401));
    assert_eq!(http_status("status of the stream: unknown"), None);
    assert_eq!(http_status("no number here"), None);
    assert_eq!(http_status("Unexpected Status 403 Forbidden"), Some(403));
    assert_eq!(http_status("LAST STATUS: 429"), Some(429));
    assert_eq!(http_status("statu"), None);
}

/// The classification as it was written first (a `contains` per word, `find` for the status):
/// the oracle for the one-pass search.
fn failure_kind_by_contains(message: &str) -> FailureKind {
    let lower = message.to_ascii_lowercase();
    let mut rest = lower.as_str();
    let mut status = None;
    while let Some(i) = rest.find("status") {
        rest = &rest[i + "status".len()..];
        let digits: String =
            rest.trim_start_matches(|c: char| c == ':' || c == ' ').chars().take_while(char::is_ascii_digit).collect();
        if digits.len() == 3 {
            status = digits.parse::<u16>().ok();
            break;
        }
    }
    match status {
        Some(401) | Some(403) => return FailureKind::Auth,
        Some(429) => return FailureKind::Quota,
        _ => {}
    }
    if lower.contains("unauthorized") || lower.contains("forbidden") {
        FailureKind::Auth
    } else if lower.contains("too many requests")
        || lower.contains("usage limit")
        || lower.contains("rate limit")
        || lower.contains("quota")
    {
        FailureKind::Quota
    } else if lower.contains("interrupted") || lower.contains("cancelled") || lower.contains("canceled") {
        FailureKind::Canceled
    } else {
        FailureKind::HarnessError
    }
}

#[test]
fn failure_kinds_are_those_a_contains_per_word_gives() {
    let words = [
        "status", "Status:", "status::  ", "statu", "sstatus", "401", "403", "429", "500", "4290", "42", "Unauthorized",
        "FORBIDDEN", "too many requests", "too  many requests", "usage limit", "rate limit", "quota", "interrupted",
        "Cancelled", "canceled", "cancel", "é", " ", "", "STATUS", "sTaTuS:", "Too Many Requests", "USAGE LIMIT",
        "Rate Limit", "QUOTA", "Interrupted", "CANCELED",
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for a in words {
        for b in words {
            for c in ["", " 401", "429", " quota", "status 500 "] {
                for message in [format!("{}{}{}", a, b, c), format!("{} {} {}", a, b, c), format!("{}{}{}", c, a, b)] {
                    let kind = failure_kind(&message);
                    assert_eq!(kind, failure_kind_by_contains(&message), "{:?}", message);
                    kinds.insert(format!("{:?}", kind));
                }
            }
        }
    }
    assert_eq!(kinds.len(), 4, "{:?}", kinds);
    let lines = ["auth401", "happy", "interrupt", "mcp", "rate429"].iter().flat_map(|t| read_transcript("codex", t));
    for line in lines {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
            let m = v["error"]["message"].as_str().or(v["message"].as_str()).or(v["item"]["message"].as_str()).unwrap_or("");
            assert_eq!(failure_kind(m), failure_kind_by_contains(m), "{}", line);
        }
    }
}

#[test]
fn toml_strings_escape_quotes_backslashes_and_control_characters() {
    assert_eq!(toml_string("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    let parsed: Value = serde_json::from_str(&toml_string("plain \"quoted\"")).unwrap();
    assert_eq!(parsed, "plain \"quoted\"");
}

#[test]
fn read_login_reads_not_logged_in_from_either_stream() {
    let out = |code: Option<i32>, stdout: &str, stderr: &str| LoginOutput { exit_code: code, stdout: stdout.to_owned(), stderr: stderr.to_owned() };
    assert!(matches!(read_login(&out(Some(1), "", "Not logged in\n")), LoginState::LoggedOut(r) if r.contains("codex login")));
    assert_eq!(read_login(&out(Some(0), "Logged in using ChatGPT\n", "")), LoginState::LoggedIn);
    assert!(matches!(read_login(&out(Some(2), "sk-secret", "")), LoginState::Unknown(r) if !r.contains("sk-secret")));
    assert!(matches!(read_login(&out(None, "", "")), LoginState::Unknown(_)));
}

#[test]
fn classify_exit_uses_the_last_fatal_error_unless_interrupted() {
    let mut driver = CodexDriver::default();
    driver.parse(&[r#"{"type":"error","message":"unexpected status 429 Too Many Requests"}"#.to_owned()]);
    let exit = ExitStatus { code: Some(1), signal: None, stderr_tail: String::new(), interrupted: false, saw_terminal: false };
    assert!(matches!(driver.classify_exit(&exit), Event::TurnFailed(f) if f.kind == FailureKind::Quota));
    let interrupted = ExitStatus { interrupted: true, ..exit.clone() };
    assert!(matches!(driver.classify_exit(&interrupted), Event::TurnFailed(f) if f.kind == FailureKind::Canceled));
    let mut fresh = CodexDriver::default();
    assert!(matches!(fresh.classify_exit(&exit), Event::TurnFailed(f) if f.kind == FailureKind::HarnessError));
}

#[test]
fn describe_interrupts_with_sigint_and_checks_login_with_login_status() {
    let d = CodexDriver::describe();
    assert_eq!(d.interrupt, InterruptMethod::SignalInt);
    assert_eq!(d.login_check, LoginCheck::Command(vec!["login".to_owned(), "status".to_owned()]));
    assert!(!d.streams_text && d.reports_usage);
}

#[test]
fn damaged_and_truncated_lines_never_panic() {
    assert_survives_damaged_lines::<CodexDriver>("codex", &["happy", "auth401"]);
}
