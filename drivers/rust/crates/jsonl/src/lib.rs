//! The `jsonl` driver: drives any program that speaks the small JSONL contract in this crate's
//! README. The runtime writes one `turn` line to the program's stdin and closes it; the program
//! answers with one JSON object per stdout line and ends the turn with `result` or `error`.

use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde_json::{json, Value};

murmur_driver_abi::export_driver!(JsonlDriver);

/// The binary when the manifest names no `inference.command`: the contract has no standard
/// program, so the manifest is expected to set one; this name documents the expectation.
pub const DEFAULT_BINARY: &str = "capsule-agent";

#[derive(Default)]
pub struct JsonlDriver {
    /// Whether the program reported a terminal line; later ones are noted, not repeated.
    terminal_seen: bool,
}

const KNOWN_CONFIG: &[&str] = &["binary_args", "env"];

impl Driver for JsonlDriver {
    fn describe() -> Description {
        Description {
            harness: "jsonl".to_owned(),
            binary: DEFAULT_BINARY.to_owned(),
            version_args: vec!["--version".to_owned()],
            tested_versions: vec!["1".to_owned()],
            interrupt: InterruptMethod::SignalInt,
            required_env: Vec::new(),
            streams_text: true,
            reports_usage: true,
            login_check: LoginCheck::Unavailable(
                "a jsonl program signs in by its own means; the contract has no login check".to_owned(),
            ),
            harness_needs: HarnessNeeds::default(),
        }
    }

    fn launch(&mut self, request: &LaunchRequest) -> Result<LaunchPlan, String> {
        let config = config_object(&request.config)?;
        check_known_keys(&config, KNOWN_CONFIG)?;
        let mut turn = json!({
            "type": "turn",
            "task": request.task,
            "system": request.system_prompt,
            "session": {
                "id": request.session.id,
                "mode": match request.session.mode { SessionMode::New => "new", SessionMode::Resume => "resume" },
            },
            "model": request.model,
            "bridge": Value::Null,
        });
        if let Some(bridge) = &request.bridge {
            turn["bridge"] = json!({
                "server": bridge.server_name,
                "url": bridge.url,
                "token": bridge.bearer_token,
                "tools": bridge.tool_names,
            });
        }
        let mut stdin = turn.to_string().into_bytes();
        stdin.push(b'\n');
        Ok(LaunchPlan {
            args: config_string_list(&config, "binary_args")?,
            env_set: config_env(&config)?,
            files: Vec::new(),
            stdin: Some(stdin),
            keep_stdin_open: false,
            interrupt_stdin: None,
        })
    }

    fn parse(&mut self, lines: &[String]) -> Vec<Event> {
        let mut events = Vec::new();
        for line in lines {
            self.parse_line(line, &mut events);
        }
        events
    }

    fn classify_exit(&mut self, exit: &ExitStatus) -> Event {
        classify_exit_default("the jsonl program", exit)
    }

    fn read_login(_output: &LoginOutput) -> LoginState {
        LoginState::Unknown("the jsonl driver has no login check".to_owned())
    }
}

impl JsonlDriver {
    fn parse_line(&mut self, line: &str, events: &mut Vec<Event>) {
        if line.trim().is_empty() {
            return;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            _ => return events.push(note_unreadable("unreadable jsonl line: ", line)),
        };
        match translate(&value) {
            Some(mut translated) => {
                if translated.iter().any(Event::is_terminal) {
                    if self.terminal_seen {
                        return events.push(note_unreadable("a second terminal line was ignored: ", line));
                    }
                    self.terminal_seen = true;
                }
                events.append(&mut translated);
            }
            None => events.push(note_unreadable("unknown jsonl line: ", line)),
        }
    }
}

/// One contract line to its events; `None` when the line is not part of the contract.
pub fn translate(v: &Value) -> Option<Vec<Event>> {
    let text = |key: &str| str_field(v, key).map(str::to_owned);
    let one = |e: Event| Some(vec![e]);
    match str_field(v, "type")? {
        "session" => one(Event::SessionStarted(SessionInfo {
            id: text("id")?,
            auth: text("auth").unwrap_or_else(|| "unknown".to_owned()),
            model: text("model"),
        })),
        "delta" => one(Event::TextDelta(text("text")?)),
        "text" => one(Event::Text(text("text")?)),
        "thinking_delta" => one(Event::ThinkingDelta(text("text")?)),
        "thinking" => one(Event::Thinking(text("text")?)),
        "tool_call" => one(Event::ToolCall(ToolCallInfo {
            id: text("id")?,
            name: text("name")?,
            input: v.get("input").map(Value::to_string).unwrap_or_else(|| "{}".to_owned()),
        })),
        "tool_result" => one(Event::ToolResult(ToolResultInfo {
            id: text("id")?,
            output: text("output").unwrap_or_default(),
            is_error: v.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        })),
        "retry" => one(Event::Retry(RetryInfo {
            attempt: u64_field(v, "attempt").unwrap_or(1).min(u32::MAX as u64) as u32,
            reason: text("reason").unwrap_or_default(),
        })),
        "usage" => one(Event::Usage(usage_split(v.get("usage")?)?)),
        "note" => one(Event::Note(cut_chars(&text("text")?, NOTE_MAX_CHARS).to_owned())),
        "suggested_prompt" => one(Event::SuggestedPrompt(text("text")?)),
        "result" => {
            let mut events = Vec::new();
            if let Some(usage) = v.get("usage") {
                events.push(Event::Usage(usage_split(usage)?));
            }
            events.push(Event::TurnEnd(text("text").unwrap_or_default()));
            Some(events)
        }
        "error" => one(Event::failed(
            failure_kind(str_field(v, "kind").unwrap_or("other")),
            text("message").unwrap_or_else(|| "the program reported an error".to_owned()),
        )),
        _ => None,
    }
}

/// The wire's `UsageSplit` (`fresh_input`, `cache_read`, `cache_write`, `output` without thinking,
/// `thinking`) back to the WIT's usage, where `output` includes `thinking`. An absent member is
/// not reported (`None`), never zero.
pub fn usage_split(v: &Value) -> Option<Usage> {
    if !v.is_object() {
        return None;
    }
    let member = |key: &str| u64_field(v, key);
    let thinking = member("thinking");
    let output = match (member("output"), thinking) {
        (None, None) => None,
        (o, t) => Some(o.unwrap_or(0).saturating_add(t.unwrap_or(0))),
    };
    Some(Usage {
        input: member("fresh_input"),
        output,
        cache_read: member("cache_read"),
        cache_creation: member("cache_write"),
        thinking,
    })
}

pub fn failure_kind(kind: &str) -> FailureKind {
    match kind.replace('-', "_").as_str() {
        "auth" => FailureKind::Auth,
        "quota" => FailureKind::Quota,
        "max_turns" => FailureKind::MaxTurns,
        "canceled" | "cancelled" => FailureKind::Canceled,
        "harness_error" => FailureKind::HarnessError,
        _ => FailureKind::Other,
    }
}

#[cfg(test)]
mod tests;
