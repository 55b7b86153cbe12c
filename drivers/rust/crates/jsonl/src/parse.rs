//! JSONL contract lines → driver events. Every line is read into [`Line`], a typed view of only
//! the members the contract defines: serde_json skips the rest unread and borrows strings from the
//! line, where building a `Value` tree allocated every key and string of every line. Members are
//! read leniently (`murmur_driver_abi::lenient`): the events are those the `Value` reading gave
//! (`value_parse`, kept as the tests' oracle). A tool call's input stays a `Value`, built only on
//! the lines that carry it. The line's struct is filled in place (`ReadInPlace`), not built by a
//! derived visitor and moved out: on lines this short the moves cost as much as the reading.

use murmur_driver_abi::fast::{self, NestedInPlace};
use murmur_driver_abi::json_text::JsonText;
use murmur_driver_abi::lenient::{name_is, Field, Nested, ReadInPlace};
use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde::de::MapAccess;

/// The members of a contract line, of every line type at once.
#[derive(Default)]
pub struct Line<'a> {
    kind: Field<'a>,
    id: Field<'a>,
    auth: Field<'a>,
    model: Field<'a>,
    text: Field<'a>,
    name: Field<'a>,
    /// Kept as its text when it is already what serde_json writes (`JsonText`).
    input: JsonText<'a>,
    output: Field<'a>,
    is_error: Field<'a>,
    attempt: Field<'a>,
    reason: Field<'a>,
    /// Absent, a `UsageSplit`, or something else: the last makes the line unknown.
    usage: Nested<UsageSplit<'a>>,
    /// The failure kind on `error`.
    error_kind: Field<'a>,
    message: Field<'a>,
}

impl<'de> ReadInPlace<'de> for Line<'de> {
    fn nested(&mut self, index: u32) -> Option<&mut dyn NestedInPlace<'de>> {
        Some(match index {
            8 => &mut self.usage,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        // By length first: one comparison per name at most.
        let index = match name.len() {
            2 if name_is(name, "id") => 0,
            4 if name_is(name, "type") => 1,
            4 if name_is(name, "auth") => 2,
            4 if name_is(name, "text") => 3,
            4 if name_is(name, "name") => 4,
            4 if name_is(name, "kind") => 5,
            5 if name_is(name, "model") => 6,
            5 if name_is(name, "input") => 7,
            5 if name_is(name, "usage") => 8,
            6 if name_is(name, "output") => 9,
            6 if name_is(name, "reason") => 10,
            7 if name_is(name, "attempt") => 11,
            7 if name_is(name, "message") => 12,
            8 if name_is(name, "is_error") => 13,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.id = map.next_value()?,
            1 => self.kind = map.next_value()?,
            2 => self.auth = map.next_value()?,
            3 => self.text = map.next_value()?,
            4 => self.name = map.next_value()?,
            5 => self.error_kind = map.next_value()?,
            6 => self.model = map.next_value()?,
            7 => self.input = map.next_value()?,
            8 => map.next_value_seed(&mut self.usage)?,
            9 => self.output = map.next_value()?,
            10 => self.reason = map.next_value()?,
            11 => self.attempt = map.next_value()?,
            12 => self.message = map.next_value()?,
            _ => self.is_error = map.next_value()?,
        }
        Ok(())
    }

    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.id,
            1 => &mut self.kind,
            2 => &mut self.auth,
            3 => &mut self.text,
            4 => &mut self.name,
            5 => &mut self.error_kind,
            6 => &mut self.model,
            9 => &mut self.output,
            10 => &mut self.reason,
            11 => &mut self.attempt,
            12 => &mut self.message,
            13 => &mut self.is_error,
            _ => return None,
        })
    }
}

/// The wire's `UsageSplit`, read in place (`Nested`).
#[derive(Default)]
pub struct UsageSplit<'a> {
    fresh_input: Field<'a>,
    cache_read: Field<'a>,
    cache_write: Field<'a>,
    output: Field<'a>,
    thinking: Field<'a>,
}

impl<'de> ReadInPlace<'de> for UsageSplit<'de> {
    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.fresh_input,
            1 => &mut self.cache_read,
            2 => &mut self.cache_write,
            3 => &mut self.output,
            4 => &mut self.thinking,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        let index = match name.len() {
            6 if name_is(name, "output") => 3,
            8 if name_is(name, "thinking") => 4,
            10 if name_is(name, "cache_read") => 1,
            11 if name_is(name, "fresh_input") => 0,
            11 if name_is(name, "cache_write") => 2,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.fresh_input = map.next_value()?,
            1 => self.cache_read = map.next_value()?,
            2 => self.cache_write = map.next_value()?,
            3 => self.output = map.next_value()?,
            _ => self.thinking = map.next_value()?,
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct JsonlParser {
    /// Whether the program reported a terminal line; later ones are noted, not repeated.
    terminal_seen: bool,
    /// The fast path's buffer for unescaped strings, reused from line to line.
    scratch: Vec<u8>,
}

impl JsonlParser {
    pub fn parse_line(&mut self, line: &str, events: &mut Vec<Event>) {
        if is_blank(line) {
            return;
        }
        let mut v = Line::default();
        // The fast path reads nearly every line; whatever it gives up on, serde_json reads from
        // scratch, so a line reads as it always did (`murmur_driver_abi::fast`).
        if !fast::object_line_into(line, &mut v, &mut self.scratch) {
            return events.push(note_unreadable("unreadable jsonl line: ", line));
        }
        // The line's events go straight into `events`: taken back if the line turns out unknown
        // or a second terminal one.
        let start = events.len();
        if !translate(&mut v, events) {
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

/// A contract line's `type`.
#[derive(Clone, Copy)]
enum Kind {
    Session,
    Delta,
    Text,
    ThinkingDelta,
    Thinking,
    ToolCall,
    ToolResult,
    Retry,
    Usage,
    Note,
    SuggestedPrompt,
    Result,
    Error,
}

impl Kind {
    /// Compared with `name_is`, by length first: a `match` on the strings calls `memcmp` for each
    /// candidate on wasm32.
    fn of(kind: &str) -> Option<Kind> {
        let k = match kind.len() {
            4 if name_is(kind, "text") => Kind::Text,
            4 if name_is(kind, "note") => Kind::Note,
            5 if name_is(kind, "delta") => Kind::Delta,
            5 if name_is(kind, "retry") => Kind::Retry,
            5 if name_is(kind, "usage") => Kind::Usage,
            5 if name_is(kind, "error") => Kind::Error,
            6 if name_is(kind, "result") => Kind::Result,
            7 if name_is(kind, "session") => Kind::Session,
            8 if name_is(kind, "thinking") => Kind::Thinking,
            9 if name_is(kind, "tool_call") => Kind::ToolCall,
            11 if name_is(kind, "tool_result") => Kind::ToolResult,
            14 if name_is(kind, "thinking_delta") => Kind::ThinkingDelta,
            16 if name_is(kind, "suggested_prompt") => Kind::SuggestedPrompt,
            _ => return None,
        };
        Some(k)
    }
}

/// One contract line to its events, pushed onto `events`; `false` when the line is not part of
/// the contract (then it may have pushed some: the caller takes them back).
pub fn translate(v: &mut Line, events: &mut Vec<Event>) -> bool {
    let event = match v.kind.as_str().and_then(Kind::of) {
        Some(Kind::Session) => match v.id.take_string() {
            Some(id) => Event::SessionStarted(SessionInfo {
                id,
                auth: v.auth.take_string().unwrap_or_else(|| "unknown".to_owned()),
                model: v.model.take_string(),
            }),
            None => return false,
        },
        Some(Kind::Delta) => match v.text.take_string() {
            Some(text) => Event::TextDelta(text),
            None => return false,
        },
        Some(Kind::Text) => match v.text.take_string() {
            Some(text) => Event::Text(text),
            None => return false,
        },
        Some(Kind::ThinkingDelta) => match v.text.take_string() {
            Some(text) => Event::ThinkingDelta(text),
            None => return false,
        },
        Some(Kind::Thinking) => match v.text.take_string() {
            Some(text) => Event::Thinking(text),
            None => return false,
        },
        Some(Kind::ToolCall) => match (v.id.take_string(), v.name.take_string()) {
            (Some(id), Some(name)) => Event::ToolCall(ToolCallInfo {
                id,
                name,
                input: v.input.text().unwrap_or_else(|| "{}".to_owned()),
            }),
            _ => return false,
        },
        Some(Kind::ToolResult) => match v.id.take_string() {
            Some(id) => Event::ToolResult(ToolResultInfo {
                id,
                output: v.output.take_string().unwrap_or_default(),
                is_error: v.is_error.as_bool().unwrap_or(false),
            }),
            None => return false,
        },
        Some(Kind::Retry) => Event::Retry(RetryInfo {
            attempt: v.attempt.as_u64().unwrap_or(1).min(u32::MAX as u64) as u32,
            reason: v.reason.take_string().unwrap_or_default(),
        }),
        Some(Kind::Usage) => match v.usage.get() {
            Some(usage) => Event::Usage(usage_split(usage)),
            None => return false,
        },
        Some(Kind::Note) => match v.text.as_str() {
            Some(text) => Event::Note(cut_chars(text, NOTE_MAX_CHARS).to_owned()),
            None => return false,
        },
        Some(Kind::SuggestedPrompt) => match v.text.take_string() {
            Some(text) => Event::SuggestedPrompt(text),
            None => return false,
        },
        Some(Kind::Result) => {
            match v.usage.get() {
                Some(usage) => events.push(Event::Usage(usage_split(usage))),
                None if v.usage.is_present() => return false,
                None => {}
            }
            Event::TurnEnd(v.text.take_string().unwrap_or_default())
        }
        Some(Kind::Error) => Event::failed(
            failure_kind(v.error_kind.as_str().unwrap_or("other")),
            v.message.take_string().unwrap_or_else(|| "the program reported an error".to_owned()),
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

/// The `error` line's `kind`, with `-` read as `_`: compared in place, by length first (`-` and `_`
/// are one byte each, so the length is that of the spelling with `_`), where building the spelling
/// with `_` made a `String` on every error line.
pub fn failure_kind(kind: &str) -> FailureKind {
    match kind.len() {
        4 if kind_is(kind, "auth") => FailureKind::Auth,
        5 if kind_is(kind, "quota") => FailureKind::Quota,
        8 if kind_is(kind, "canceled") => FailureKind::Canceled,
        9 if kind_is(kind, "max_turns") => FailureKind::MaxTurns,
        9 if kind_is(kind, "cancelled") => FailureKind::Canceled,
        13 if kind_is(kind, "harness_error") => FailureKind::HarnessError,
        _ => FailureKind::Other,
    }
}

/// Whether `kind` is `expected` once each `-` in it is read as `_` (`expected` has no `-`).
fn kind_is(kind: &str, expected: &str) -> bool {
    let (a, b) = (kind.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| x == y || (x == b'-' && y == b'_'))
}
