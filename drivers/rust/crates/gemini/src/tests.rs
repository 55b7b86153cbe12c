use super::parse::*;
use super::*;
use murmur_driver_abi::testing::*;

fn golden(name: &str) -> Vec<Event> {
    golden_with(name, 1)
}

fn golden_with(name: &str, terminal_events: usize) -> Vec<Event> {
    let events = check_transcript::<GeminiDriver>("gemini-cli", name, terminal_events);
    assert_golden("gemini", name, &events);
    events
}

#[test]
fn happy_transcript_streams_deltas_completes_the_text_and_ends_with_it() {
    let events = golden("happy");
    assert!(events.contains(&Event::Text("Hello from the fake Gemini model.".to_owned())));
    assert_eq!(events.last(), Some(&Event::TurnEnd("Hello from the fake Gemini model.".to_owned())));
    assert!(events.contains(&Event::Usage(Usage { input: Some(403), output: Some(16), cache_read: Some(0), cache_creation: None, thinking: None })));
}

#[test]
fn auth401_transcript_fails_with_kind_auth() {
    let events = golden("auth401");
    match events.last() {
        Some(Event::TurnFailed(f)) => {
            assert_eq!(f.kind, FailureKind::Auth);
            assert!(f.message.contains("API key not valid"));
        }
        other => panic!("{:?}", other),
    }
}

/// Recorded by real-harness's RealGeminiIT: a call of the bridge's `echo` over MCP.
#[test]
fn mcp_transcript_calls_the_bridge_tool_by_its_bare_name() {
    let events = golden("mcp");
    assert!(events.iter().any(|e| matches!(e, Event::ToolCall(c) if c.name == "echo" && c.input == "{\"args\":[\"hello-bridge\"]}")));
    assert!(events.iter().any(|e| matches!(e, Event::ToolResult(r) if r.output == "hello-bridge\n" && !r.is_error)));
    assert_eq!(events.last(), Some(&Event::TurnEnd("The tool said hello-bridge.".to_owned())));
}

/// Recorded by RealGeminiIT: an API that always answers 429, ended by the driver's 3 attempts.
#[test]
fn rate429_transcript_fails_with_kind_quota() {
    let events = golden("rate429");
    match events.last() {
        Some(Event::TurnFailed(f)) => {
            assert_eq!(f.kind, FailureKind::Quota);
            assert!(f.message.contains("Resource has been exhausted"), "{}", f.message);
        }
        other => panic!("{:?}", other),
    }
}

/// SIGINT to the group mid-stream: Gemini CLI prints nothing more and exits 0.
#[test]
fn interrupt_transcript_streams_then_stops_without_a_terminal_line() {
    let events = golden_with("interrupt", 0);
    assert!(events.contains(&Event::TextDelta("Starting a long answer".to_owned())));
    let exit = ExitStatus { code: Some(0), signal: None, stderr_tail: String::new(), interrupted: true, saw_terminal: false };
    assert!(matches!(classify_exit(&exit), Event::TurnFailed(f) if f.kind == FailureKind::Canceled));
}

#[test]
fn tool_use_and_result_are_reported_with_bridge_names_stripped() {
    let mut driver = GeminiDriver::default();
    driver.launch(&golden_launch_request()).unwrap();
    let events = driver.parse(&[
        r#"{"type":"message","role":"assistant","content":"Let me echo.","delta":true}"#.to_owned(),
        r#"{"type":"tool_use","tool_name":"mcp_murmur_echo","tool_id":"t1","parameters":{"text":"hi"}}"#.to_owned(),
        r#"{"type":"tool_result","tool_id":"t1","status":"success","output":"echo: hi"}"#.to_owned(),
        r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t2","parameters":{}}"#.to_owned(),
        r#"{"type":"tool_result","tool_id":"t2","status":"error","output":"","error":{"type":"x","message":"denied"}}"#.to_owned(),
        r#"{"type":"message","role":"assistant","content":"Done.","delta":true}"#.to_owned(),
        r#"{"type":"result","status":"success","stats":{"input_tokens":50,"cached":20,"output_tokens":5}}"#.to_owned(),
    ]);
    assert_eq!(
        events,
        vec![
            Event::TextDelta("Let me echo.".to_owned()),
            Event::Text("Let me echo.".to_owned()),
            Event::ToolCall(ToolCallInfo { id: "t1".to_owned(), name: "echo".to_owned(), input: "{\"text\":\"hi\"}".to_owned() }),
            Event::ToolResult(ToolResultInfo { id: "t1".to_owned(), output: "echo: hi".to_owned(), is_error: false }),
            Event::ToolCall(ToolCallInfo { id: "t2".to_owned(), name: "run_shell_command".to_owned(), input: "{}".to_owned() }),
            Event::ToolResult(ToolResultInfo { id: "t2".to_owned(), output: "denied".to_owned(), is_error: true }),
            Event::TextDelta("Done.".to_owned()),
            Event::Text("Done.".to_owned()),
            Event::Usage(Usage { input: Some(30), output: Some(5), cache_read: Some(20), cache_creation: None, thinking: None }),
            Event::TurnEnd("Done.".to_owned()),
        ]
    );
}

#[test]
fn error_events_are_notes_and_unknown_lines_are_cut_notes() {
    let mut driver = GeminiDriver::default();
    let events = driver.parse(&[
        r#"{"type":"error","severity":"warning","message":"Loop detected"}"#.to_owned(),
        format!("{{\"type\":\"new\",\"x\":\"{}\"}}", "z".repeat(1000)),
    ]);
    assert_eq!(events[0], Event::Note("gemini warning: Loop detected".to_owned()));
    assert!(matches!(&events[1], Event::Note(n) if n.chars().count() <= 512));
}

#[test]
fn failure_kinds_come_from_the_embedded_api_error() {
    for (t, m, kind) in [
        ("unknown", r#"[API Error: {"error":{"code":401,"status":"UNAUTHENTICATED"}}]"#, FailureKind::Auth),
        ("unknown", r#"[API Error: {"error": {"code": 403}}]"#, FailureKind::Auth),
        ("unknown", r#"[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}]"#, FailureKind::Quota),
        ("FatalTurnLimitedError", "Reached max session turns", FailureKind::MaxTurns),
        ("unknown", "Reached the turn limit", FailureKind::MaxTurns),
        ("unknown", "something else", FailureKind::HarnessError),
    ] {
        assert_eq!(failure_kind(t, m), kind, "{} {}", t, m);
    }
}

/// The classification as it was written first, a `contains` per word: the oracle for the one-pass
/// search.
fn failure_kind_by_contains(error_type: &str, message: &str) -> FailureKind {
    let t = error_type.to_ascii_lowercase();
    let m = message.to_ascii_lowercase();
    let compact: String = m.chars().filter(|c| !c.is_whitespace()).collect();
    let has = |s: &str| m.contains(s) || t.contains(s) || compact.contains(s);
    if has("\"code\":401")
        || has("\"code\":403")
        || has("unauthenticated")
        || has("permission_denied")
        || has("authentication")
        || has("api key not valid")
    {
        FailureKind::Auth
    } else if has("\"code\":429") || has("resource_exhausted") || has("quota") || has("rate limit") {
        FailureKind::Quota
    } else if has("turn limit") || has("maxsessionturns") || has("max_session_turns") {
        FailureKind::MaxTurns
    } else if has("cancel") || has("abort") {
        FailureKind::Canceled
    } else {
        FailureKind::HarnessError
    }
}

#[test]
fn failure_kinds_are_those_a_contains_per_word_gives() {
    let words = [
        "\"code\":401", "\"code\": 403", "\"CODE\":\t429", "UNAUTHENTICATED", "permission_denied", "Authentication",
        "API key not valid", "API  key not valid", "resource_exhausted", "Quota", "rate limit", "rate\u{a0}limit",
        "turn limit", "max session turns", "maxSession\u{2003}Turns", "max_session_turns", "Cancelled", "abort",
        "aborted", "quot", "\"code\":4", "01", "é", "",
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for (i, a) in words.iter().enumerate() {
        for b in words.iter() {
            for (t, m) in [(*a, format!("x {} y", b)), ("", format!("{}{}", a, b)), (*b, a.to_string()), ("unknown", format!("[API Error: {} ({})]", a, b))] {
                let kind = failure_kind(t, &m);
                assert_eq!(kind, failure_kind_by_contains(t, &m), "{:?} {:?}", t, m);
                kinds.insert(format!("{:?}", kind));
            }
        }
        assert_eq!(failure_kind(a, ""), failure_kind_by_contains(a, ""), "{}", i);
    }
    assert_eq!(kinds.len(), 5, "{:?}", kinds);
    let lines = ["auth401", "happy", "interrupt", "mcp", "rate429"].iter().flat_map(|t| read_transcript("gemini-cli", t));
    for line in lines {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
            let t = v["error"]["type"].as_str().unwrap_or("");
            let m = v["error"]["message"].as_str().or(v["message"].as_str()).unwrap_or("");
            assert_eq!(failure_kind(t, m), failure_kind_by_contains(t, m), "{}", line);
        }
    }
}

#[test]
fn launch_passes_the_task_as_prompt_and_keeps_prompt_and_token_in_private_files() {
    let plan = plan(&golden_launch_request()).unwrap();
    assert_eq!(&plan.args[..4], &["--prompt=Say hello.", "--output-format", "stream-json", "--skip-trust"]);
    assert!(plan.args.contains(&"--allowed-mcp-server-names=murmur".to_owned()));
    assert!(!plan.args.iter().any(|a| a.contains("golden-token") || a.starts_with("--resume")));
    assert!(plan.env_set.contains(&("GEMINI_SYSTEM_MD".to_owned(), "{files_dir}/system.md".to_owned())));
    assert!(plan.env_set.contains(&("GEMINI_CLI_SYSTEM_SETTINGS_PATH".to_owned(), "{files_dir}/settings.json".to_owned())));
    assert_eq!(plan.files[1], DriverFile { name: "system.md".to_owned(), contents: "You are a golden test.".to_owned() });
    assert_eq!(plan.files[0].name, "settings.json");
    let settings: Value = serde_json::from_str(&plan.files[0].contents).unwrap();
    assert_eq!(settings["mcpServers"]["murmur"]["httpUrl"], "http://127.0.0.1:8767/mcp");
    assert_eq!(settings["mcpServers"]["murmur"]["headers"]["Authorization"], "Bearer golden-token");
    assert_eq!(settings["telemetry"]["enabled"], false);
    assert!(plan.env_set.contains(&("GEMINI_TELEMETRY_ENABLED".to_owned(), "false".to_owned())));
    assert_eq!(settings["general"]["maxAttempts"], 3);
    // No auth type named or implied: Gemini CLI keeps the user's own choice (a Google sign-in).
    assert!(settings.get("security").is_none());
    assert_eq!(plan.stdin, None);
    assert!(!plan.keep_stdin_open);
}

#[test]
fn launch_resumes_and_chooses_the_model_with_equals_joined_values() {
    let mut r = golden_launch_request();
    r.session = Session { id: "-x".to_owned(), mode: SessionMode::Resume };
    r.model = Some("gemini-2.5-pro".to_owned());
    r.task = "--help".to_owned();
    r.bridge = None;
    r.config = Some(r#"{"approval_mode":"yolo","telemetry":true}"#.to_owned());
    let plan = plan(&r).unwrap();
    assert!(plan.args.contains(&"--resume=-x".to_owned()));
    assert!(plan.args.contains(&"--model=gemini-2.5-pro".to_owned()));
    assert!(plan.args.contains(&"--approval-mode=yolo".to_owned()));
    assert_eq!(plan.args[0], "--prompt=--help");
    let settings: Value = serde_json::from_str(&plan.files[0].contents).unwrap();
    assert_eq!(settings, serde_json::json!({"general": {"maxAttempts": 3}}));
    assert!(!plan.env_set.iter().any(|(k, _)| k == "GEMINI_TELEMETRY_ENABLED"));
    r.config = Some(r#"{"sandbox":true}"#.to_owned());
    assert!(super::plan(&r).is_err());
}

fn settings_for(config: &str, system_prompt: &str) -> Result<(Value, LaunchPlan), String> {
    let mut r = golden_launch_request();
    r.bridge = None;
    r.config = Some(config.to_owned());
    r.system_prompt = system_prompt.to_owned();
    let plan = plan(&r)?;
    Ok((serde_json::from_str(&plan.files[0].contents).unwrap(), plan))
}

#[test]
fn the_auth_type_comes_from_the_config_or_is_inferred_from_the_configured_variables() {
    let selected = |config: &str| settings_for(config, "x").unwrap().0["security"]["auth"]["selectedType"].clone();
    // A custom endpoint: Gemini CLI alone would pick `gateway`, which headless runs refuse.
    assert_eq!(selected(r#"{"env":{"GOOGLE_GEMINI_BASE_URL":"http://127.0.0.1:1","GEMINI_API_KEY":"k"}}"#), "gemini-api-key");
    assert_eq!(selected(r#"{"env":{"GOOGLE_GEMINI_BASE_URL":"http://127.0.0.1:1"}}"#), "gemini-api-key");
    assert_eq!(selected(r#"{"env":{"GEMINI_API_KEY":"k"}}"#), "gemini-api-key");
    assert_eq!(selected(r#"{"auth_type":"oauth-personal","env":{"GOOGLE_GEMINI_BASE_URL":"x"}}"#), "oauth-personal");
    assert_eq!(selected(r#"{"auth_type":"vertex-ai"}"#), "vertex-ai");
    assert_eq!(selected(r#"{}"#), Value::Null);
    assert!(settings_for(r#"{"auth_type":"gateway"}"#, "x").is_err());
    assert!(settings_for(r#"{"auth_type":1}"#, "x").is_err());
}

#[test]
fn max_attempts_bounds_gemini_retries_from_1_to_10() {
    let attempts = |config: &str| settings_for(config, "x").map(|(s, _)| s["general"]["maxAttempts"].clone());
    assert_eq!(attempts(r#"{}"#).unwrap(), 3);
    assert_eq!(attempts(r#"{"max_attempts":1}"#).unwrap(), 1);
    assert_eq!(attempts(r#"{"max_attempts":10}"#).unwrap(), 10);
    assert!(attempts(r#"{"max_attempts":0}"#).is_err());
    assert!(attempts(r#"{"max_attempts":11}"#).is_err());
}

#[test]
fn a_capsule_without_a_system_prompt_keeps_gemini_clis_own() {
    for empty in ["", "  \n"] {
        let (_, plan) = settings_for("{}", empty).unwrap();
        assert!(!plan.env_set.iter().any(|(k, _)| k == "GEMINI_SYSTEM_MD"), "{:?}", plan.env_set);
        assert_eq!(plan.files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), vec!["settings.json"]);
    }
    let (_, plan) = settings_for("{}", "Be brief.").unwrap();
    assert!(plan.env_set.contains(&("GEMINI_SYSTEM_MD".to_owned(), "{files_dir}/system.md".to_owned())));
}

#[test]
fn a_failure_says_when_gemini_skipped_the_drivers_settings() {
    let tail = "\u{1b}[33mSecurity Warning: Skipping system settings file '/tmp/r/files-1/settings.json': Parent directory '/tmp' is insecure\u{1b}[0m\nInvalid auth method selected.\n";
    let exit = ExitStatus { code: Some(41), signal: None, stderr_tail: tail.to_owned(), interrupted: false, saw_terminal: false };
    match classify_exit(&exit) {
        Event::TurnFailed(f) => {
            assert_eq!(f.kind, FailureKind::Auth);
            assert!(f.message.contains("Invalid auth method selected."), "{}", f.message);
            assert!(f.message.ends_with(SETTINGS_SKIPPED_HINT), "{}", f.message);
            assert!(!f.message.contains('\u{1b}'), "{}", f.message);
        }
        other => panic!("{:?}", other),
    }
}

#[test]
fn classify_exit_reads_gemini_exit_codes() {
    let exit = |code: Option<i32>, interrupted: bool| ExitStatus { code, signal: None, stderr_tail: String::new(), interrupted, saw_terminal: false };
    let kind = |e: Event| match e { Event::TurnFailed(f) => f.kind, other => panic!("{:?}", other) };
    assert_eq!(kind(classify_exit(&exit(Some(145), true))), FailureKind::Canceled);
    assert_eq!(kind(classify_exit(&exit(Some(145), false))), FailureKind::Auth);
    assert_eq!(kind(classify_exit(&exit(Some(41), false))), FailureKind::Auth);
    assert_eq!(kind(classify_exit(&exit(Some(173), false))), FailureKind::Quota);
    assert_eq!(kind(classify_exit(&exit(Some(53), false))), FailureKind::MaxTurns);
    assert_eq!(kind(classify_exit(&exit(Some(130), false))), FailureKind::Canceled);
    assert_eq!(kind(classify_exit(&exit(Some(55), false))), FailureKind::HarnessError);
    assert_eq!(kind(classify_exit(&exit(Some(1), false))), FailureKind::HarnessError);
}

#[test]
fn describe_has_no_login_command_and_explains_why() {
    let d = GeminiDriver::describe();
    match d.login_check {
        LoginCheck::Unavailable(reason) => assert!(reason.contains("gemini")),
        other => panic!("{:?}", other),
    }
    assert_eq!(d.interrupt, InterruptMethod::SignalInt);
    assert!(d.tested_versions.contains(&"0.61.0".to_owned()));
}

#[test]
fn damaged_and_truncated_lines_never_panic() {
    assert_survives_damaged_lines::<GeminiDriver>("gemini-cli", &["happy", "auth401"]);
}
