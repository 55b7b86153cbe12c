//! JSONL contract lines → driver events. Every line is read into [`Line`], a typed view of only
//! the members the contract defines: serde_json skips the rest unread and borrows strings from the
//! line, where building a `Value` tree allocated every key and string of every line. Members are
//! read leniently (`murmur_driver_abi::lenient`): the events are those the `Value` reading gave
//! (`value_parse`, kept as the tests' oracle). A tool call's input stays a `Value`, built only on
//! the lines that carry it.

use murmur_driver_abi::lenient::{object_line, Field, Json, Member};
use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde::Deserialize;
use serde_json::Value;

/// The members of a contract line, of every line type at once.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Field<'a>,
    #[serde(borrow)]
    id: Field<'a>,
    #[serde(borrow)]
    auth: Field<'a>,
    #[serde(borrow)]
    model: Field<'a>,
    #[serde(borrow)]
    text: Field<'a>,
    #[serde(borrow)]
    name: Field<'a>,
    input: Json,
    #[serde(borrow)]
    output: Field<'a>,
    #[serde(borrow)]
    is_error: Field<'a>,
    #[serde(borrow)]
    attempt: Field<'a>,
    #[serde(borrow)]
    reason: Field<'a>,
    /// Absent, a `UsageSplit`, or something else: the last makes the line unknown.
    #[serde(borrow)]
    usage: Member<UsageSplit<'a>>,
    /// The failure kind on `error`.
    #[serde(rename = "kind", borrow)]
    error_kind: Field<'a>,
    #[serde(borrow)]
    message: Field<'a>,
}

/// The wire's `UsageSplit`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct UsageSplit<'a> {
    #[serde(borrow)]
    fresh_input: Field<'a>,
    #[serde(borrow)]
    cache_read: Field<'a>,
    #[serde(borrow)]
    cache_write: Field<'a>,
    #[serde(borrow)]
    output: Field<'a>,
    #[serde(borrow)]
    thinking: Field<'a>,
}

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
        let v: Line = match object_line(line) {
            Some(v) => v,
            None => return events.push(note_unreadable("unreadable jsonl line: ", line)),
        };
        // The line's events go straight into `events`: taken back if the line turns out unknown
        // or a second terminal one.
        let start = events.len();
        if !translate(v, events) {
            events.truncate(start);
            return events.push(note_unreadable("unknown jsonl line: ", line));
        }
        if events[start..].iter().any(Event::is_terminal) {
            if self.terminal_seen {
                events.truncate(start);
                return events.push(note_unreadable("a second terminal line was ignored: ", line));
            }
            self.terminal_seen = true;
        }
    }
}

/// One contract line to its events, pushed onto `events`; `false` when the line is not part of
/// the contract (then it may have pushed some: the caller takes them back).
pub fn translate(v: Line, events: &mut Vec<Event>) -> bool {
    let event = match v.kind.as_str() {
        Some("session") => match v.id.into_string() {
            Some(id) => Event::SessionStarted(SessionInfo {
                id,
                auth: v.auth.into_string().unwrap_or_else(|| "unknown".to_owned()),
                model: v.model.into_string(),
            }),
            None => return false,
        },
        Some("delta") => match v.text.into_string() {
            Some(text) => Event::TextDelta(text),
            None => return false,
        },
        Some("text") => match v.text.into_string() {
            Some(text) => Event::Text(text),
            None => return false,
        },
        Some("thinking_delta") => match v.text.into_string() {
            Some(text) => Event::ThinkingDelta(text),
            None => return false,
        },
        Some("thinking") => match v.text.into_string() {
            Some(text) => Event::Thinking(text),
            None => return false,
        },
        Some("tool_call") => match (v.id.into_string(), v.name.into_string()) {
            (Some(id), Some(name)) => Event::ToolCall(ToolCallInfo {
                id,
                name,
                input: v.input.get().map(Value::to_string).unwrap_or_else(|| "{}".to_owned()),
            }),
            _ => return false,
        },
        Some("tool_result") => match v.id.into_string() {
            Some(id) => Event::ToolResult(ToolResultInfo {
                id,
                output: v.output.into_string().unwrap_or_default(),
                is_error: v.is_error.as_bool().unwrap_or(false),
            }),
            None => return false,
        },
        Some("retry") => Event::Retry(RetryInfo {
            attempt: v.attempt.as_u64().unwrap_or(1).min(u32::MAX as u64) as u32,
            reason: v.reason.into_string().unwrap_or_default(),
        }),
        Some("usage") => match v.usage.object() {
            Some(usage) => Event::Usage(usage_split(usage)),
            None => return false,
        },
        Some("note") => match v.text.as_str() {
            Some(text) => Event::Note(cut_chars(text, NOTE_MAX_CHARS).to_owned()),
            None => return false,
        },
        Some("suggested_prompt") => match v.text.into_string() {
            Some(text) => Event::SuggestedPrompt(text),
            None => return false,
        },
        Some("result") => {
            match &v.usage {
                Member::Absent => {}
                Member::Object(usage) => events.push(Event::Usage(usage_split(usage))),
                Member::Other => return false,
            }
            Event::TurnEnd(v.text.into_string().unwrap_or_default())
        }
        Some("error") => Event::failed(
            failure_kind(v.error_kind.as_str().unwrap_or("other")),
            v.message.into_string().unwrap_or_else(|| "the program reported an error".to_owned()),
        ),
        _ => return false,
    };
    events.push(event);
    true
}

/// The wire's `UsageSplit` (`fresh_input`, `cache_read`, `cache_write`, `output` without thinking,
/// `thinking`) back to the WIT's usage, where `output` includes `thinking`. An absent member is
/// not reported (`None`), never zero.
pub fn usage_split(v: &UsageSplit) -> Usage {
    let thinking = v.thinking.as_u64();
    let output = match (v.output.as_u64(), thinking) {
        (None, None) => None,
        (o, t) => Some(o.unwrap_or(0).saturating_add(t.unwrap_or(0))),
    };
    Usage {
        input: v.fresh_input.as_u64(),
        output,
        cache_read: v.cache_read.as_u64(),
        cache_creation: v.cache_write.as_u64(),
        thinking,
    }
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
