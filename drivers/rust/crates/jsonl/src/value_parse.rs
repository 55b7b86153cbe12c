//! The oracle for `parse` (tests only): the driver's earlier reading of each line as a whole
//! `serde_json::Value` tree, kept unchanged but for `failure_kind`, which reads no line and is
//! shared with `parse`. `parse` reads typed, borrowed members instead and must give the same events
//! for every line; the differential tests in `oracle_tests` check that on the transcripts and on
//! mutations of them.

use super::parse::failure_kind;
use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde_json::Value;

#[derive(Default)]
pub struct JsonlParser {
    /// Whether the program reported a terminal line; later ones are noted, not repeated.
    terminal_seen: bool,
}

impl JsonlParser {
    pub fn parse_line(&mut self, line: &str, events: &mut Vec<Event>) {
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
