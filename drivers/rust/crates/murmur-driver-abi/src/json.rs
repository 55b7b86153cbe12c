//! The canonical event JSON shared with the Java host's `EventJson` codec: one object per event,
//! `"type"` = the WIT case name, a primitive payload under `"value"`, a record payload flattened
//! with the WIT field names (kebab-case), options as `null`, integers as JSON numbers.

use crate::types::*;
use serde_json::{json, Map, Value};

pub fn failure_kind_name(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Auth => "auth",
        FailureKind::Quota => "quota",
        FailureKind::MaxTurns => "max-turns",
        FailureKind::Canceled => "canceled",
        FailureKind::HarnessError => "harness-error",
        FailureKind::Other => "other",
    }
}

fn quota_state_name(state: QuotaState) -> &'static str {
    match state {
        QuotaState::Ok => "ok",
        QuotaState::Warning => "warning",
        QuotaState::Exhausted => "exhausted",
    }
}

fn object(kind: &str, fields: Vec<(&str, Value)>) -> Value {
    let mut map = Map::new();
    map.insert("type".to_owned(), Value::String(kind.to_owned()));
    for (name, value) in fields {
        map.insert(name.to_owned(), value);
    }
    Value::Object(map)
}

fn value(kind: &str, s: &str) -> Value {
    object(kind, vec![("value", json!(s))])
}

pub fn event_to_json(event: &Event) -> Value {
    match event {
        Event::SessionStarted(i) => object(
            "session-started",
            vec![("id", json!(i.id)), ("auth", json!(i.auth)), ("model", json!(i.model))],
        ),
        Event::TextDelta(s) => value("text-delta", s),
        Event::Text(s) => value("text", s),
        Event::ThinkingDelta(s) => value("thinking-delta", s),
        Event::Thinking(s) => value("thinking", s),
        Event::ToolCall(c) => object(
            "tool-call",
            vec![("id", json!(c.id)), ("name", json!(c.name)), ("input", json!(c.input))],
        ),
        Event::ToolResult(r) => object(
            "tool-result",
            vec![("id", json!(r.id)), ("output", json!(r.output)), ("is-error", json!(r.is_error))],
        ),
        Event::Retry(r) => object("retry", vec![("attempt", json!(r.attempt)), ("reason", json!(r.reason))]),
        Event::Usage(u) => object(
            "usage",
            vec![
                ("input", json!(u.input)),
                ("output", json!(u.output)),
                ("cache-read", json!(u.cache_read)),
                ("cache-creation", json!(u.cache_creation)),
                ("thinking", json!(u.thinking)),
            ],
        ),
        Event::TurnEnd(s) => value("turn-end", s),
        Event::TurnFailed(f) => object(
            "turn-failed",
            vec![("kind", json!(failure_kind_name(f.kind))), ("message", json!(f.message))],
        ),
        Event::Note(s) => value("note", s),
        Event::ToolCallStarted(s) => object("tool-call-started", vec![("id", json!(s.id)), ("name", json!(s.name))]),
        Event::ToolCallProgress(p) => object(
            "tool-call-progress",
            vec![("id", json!(p.id)), ("input-bytes", json!(p.input_bytes))],
        ),
        Event::Quota(windows) => object(
            "quota",
            vec![(
                "windows",
                Value::Array(
                    windows
                        .iter()
                        .map(|w| {
                            json!({
                                "name": w.name,
                                "used": w.used,
                                "resets-at": w.resets_at,
                                "window-minutes": w.window_minutes,
                                "state": w.state.map(quota_state_name),
                            })
                        })
                        .collect(),
                ),
            )],
        ),
        Event::SuggestedPrompt(s) => value("suggested-prompt", s),
    }
}

/// A JSON array of events, one compact event per line, so a person can review a golden file and
/// a diff shows which event changed.
pub fn events_to_pretty_lines(events: &[Event]) -> String {
    if events.is_empty() {
        return "[]\n".to_owned();
    }
    let mut out = String::from("[\n");
    for (i, event) in events.iter().enumerate() {
        out.push_str("  ");
        out.push_str(&event_to_json(event).to_string());
        if i + 1 < events.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str("]\n");
    out
}
