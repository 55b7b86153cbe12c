//! Gemini CLI stream-json → driver events. Every line is read into [`Line`], a typed view of only
//! the members the driver uses: serde_json skips the rest unread (a result's per-model stats, the
//! timestamps) and borrows strings from the line, where building a `Value` tree allocated every
//! key and string of every line. Members are read leniently (`murmur_driver_abi::lenient`): the
//! events are those the `Value` reading gave (`value_parse`, kept as the tests' oracle). A tool
//! call's parameters stay a `Value`, built only on the lines that carry them. State that spans
//! lines lives in [`GeminiParser`], so any batch split gives the same events.

use murmur_driver_abi::fast::{self, NestedInPlace};
use murmur_driver_abi::json_text::JsonText;
use murmur_driver_abi::lenient::{name_is, Field, Nested, ReadInPlace};
use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde::de::MapAccess;

/// The members of a line the driver reads, of every line type at once.
/// Filled in place (`ReadInPlace`), not built by a derived visitor and moved out for every line.
#[derive(Default)]
pub struct Line<'a> {
    kind: Field<'a>,
    session_id: Field<'a>,
    model: Field<'a>,
    role: Field<'a>,
    content: Field<'a>,
    delta: Field<'a>,
    tool_id: Field<'a>,
    tool_name: Field<'a>,
    /// Kept as its text when it is already what serde_json writes (`JsonText`).
    parameters: JsonText<'a>,
    status: Field<'a>,
    output: Field<'a>,
    /// An object on `tool_result` and `result`.
    error: Nested<ErrorJson<'a>>,
    severity: Field<'a>,
    /// A string on `error`.
    message: Field<'a>,
    stats: Nested<Stats<'a>>,
}

impl<'de> ReadInPlace<'de> for Line<'de> {
    fn nested(&mut self, index: u32) -> Option<&mut dyn NestedInPlace<'de>> {
        Some(match index {
            11 => &mut self.error,
            14 => &mut self.stats,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        // By length first: one comparison per name at most.
        let index = match name.len() {
            4 if name_is(name, "type") => 0,
            4 if name_is(name, "role") => 3,
            5 if name_is(name, "model") => 2,
            5 if name_is(name, "delta") => 5,
            5 if name_is(name, "error") => 11,
            5 if name_is(name, "stats") => 14,
            6 if name_is(name, "status") => 9,
            6 if name_is(name, "output") => 10,
            7 if name_is(name, "content") => 4,
            7 if name_is(name, "tool_id") => 6,
            7 if name_is(name, "message") => 13,
            8 if name_is(name, "severity") => 12,
            9 if name_is(name, "tool_name") => 7,
            10 if name_is(name, "session_id") => 1,
            10 if name_is(name, "parameters") => 8,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            1 => self.session_id = map.next_value()?,
            2 => self.model = map.next_value()?,
            3 => self.role = map.next_value()?,
            4 => self.content = map.next_value()?,
            5 => self.delta = map.next_value()?,
            6 => self.tool_id = map.next_value()?,
            7 => self.tool_name = map.next_value()?,
            8 => self.parameters = map.next_value()?,
            9 => self.status = map.next_value()?,
            10 => self.output = map.next_value()?,
            11 => map.next_value_seed(&mut self.error)?,
            12 => self.severity = map.next_value()?,
            13 => self.message = map.next_value()?,
            _ => map.next_value_seed(&mut self.stats)?,
        }
        Ok(())
    }

    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.kind,
            1 => &mut self.session_id,
            2 => &mut self.model,
            3 => &mut self.role,
            4 => &mut self.content,
            5 => &mut self.delta,
            6 => &mut self.tool_id,
            7 => &mut self.tool_name,
            9 => &mut self.status,
            10 => &mut self.output,
            12 => &mut self.severity,
            13 => &mut self.message,
            _ => return None,
        })
    }
}

/// A `tool_result` or `result` line's `error`, read in place (`Nested`).
#[derive(Default)]
pub struct ErrorJson<'a> {
    kind: Field<'a>,
    message: Field<'a>,
}

impl<'de> ReadInPlace<'de> for ErrorJson<'de> {
    fn member_index(name: &str) -> Option<u32> {
        let index = match name.len() {
            4 if name_is(name, "type") => 0,
            7 if name_is(name, "message") => 1,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            _ => self.message = map.next_value()?,
        }
        Ok(())
    }
}

/// A `result` line's `stats`, read in place (`Nested`); its per-model `models` is skipped.
#[derive(Default)]
pub struct Stats<'a> {
    input: Field<'a>,
    input_tokens: Field<'a>,
    output_tokens: Field<'a>,
    cached: Field<'a>,
}

impl<'de> ReadInPlace<'de> for Stats<'de> {
    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.input,
            1 => &mut self.input_tokens,
            2 => &mut self.output_tokens,
            3 => &mut self.cached,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        let index = match name.len() {
            5 if name_is(name, "input") => 0,
            6 if name_is(name, "cached") => 3,
            12 if name_is(name, "input_tokens") => 1,
            13 if name_is(name, "output_tokens") => 2,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.input = map.next_value()?,
            1 => self.input_tokens = map.next_value()?,
            2 => self.output_tokens = map.next_value()?,
            _ => self.cached = map.next_value()?,
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct GeminiParser {
    /// Names Gemini CLI may give a bridge tool (`mcp__<server>__`, `mcp_<server>_`, `<server>__`).
    prefixes: Vec<String>,
    tools: Vec<String>,
    /// The assistant text streamed since the last tool call: completed as one `text` at the next
    /// tool call or result, and the turn's final answer.
    message: String,
    streaming: bool,
    /// The fast path's buffer for unescaped strings, reused from line to line.
    scratch: Vec<u8>,
}

impl GeminiParser {
    pub fn for_bridge(bridge: Option<&Bridge>) -> GeminiParser {
        let mut parser = GeminiParser::default();
        if let Some(b) = bridge {
            let s = &b.server_name;
            parser.prefixes = vec![format!("mcp__{}__", s), format!("mcp_{}_", s), format!("{}__", s)];
            parser.tools = b.tool_names.clone();
        }
        parser
    }

    pub fn parse_line(&mut self, line: &str, events: &mut Vec<Event>) {
        if is_blank(line) {
            return;
        }
        let mut line_members = Line::default();
        // The fast path reads nearly every line; whatever it gives up on, serde_json reads from
        // scratch, so a line reads as it always did (`murmur_driver_abi::fast`).
        if !fast::object_line_into(line, &mut line_members, &mut self.scratch) {
            return events.push(note_unreadable("unreadable gemini line: ", line));
        }
        let v = &mut line_members;
        let understood = match v.kind.as_str().and_then(Kind::of) {
            Some(Kind::Init) => {
                events.push(Event::SessionStarted(SessionInfo {
                    id: v.session_id.take_string().unwrap_or_default(),
                    // Gemini CLI does not say how it bills in its event stream.
                    auth: "unknown".to_owned(),
                    model: v.model.take_string(),
                }));
                true
            }
            Some(Kind::Message) => self.message(v, events),
            Some(Kind::ToolUse) => {
                self.complete_message(events);
                self.message.clear();
                let name = v.tool_name.as_str().unwrap_or("");
                events.push(Event::ToolCall(ToolCallInfo {
                    id: v.tool_id.take_string().unwrap_or_default(),
                    name: if self.prefixes.is_empty() {
                        name.to_owned()
                    } else {
                        strip_tool_prefix(name, &self.prefixes, &self.tools)
                    },
                    input: v.parameters.text().unwrap_or_else(|| "{}".to_owned()),
                }));
                true
            }
            Some(Kind::ToolResult) => {
                let is_error = v.status.as_str() != Some("success");
                let error = v.error.get().and_then(|e| e.message.as_str());
                let output = match (v.output.as_str(), error) {
                    (Some(out), _) if !is_error || error.is_none() => out.to_owned(),
                    (_, Some(message)) => message.to_owned(),
                    (_, None) => String::new(),
                };
                events.push(Event::ToolResult(ToolResultInfo { id: v.tool_id.take_string().unwrap_or_default(), output, is_error }));
                true
            }
            Some(Kind::Error) => {
                // A warning or a non-fatal error the CLI recovered from; the result decides.
                let severity = v.severity.as_str().unwrap_or("error");
                let message = v.message.as_str().unwrap_or("");
                events.push(Event::Note(cut_chars(&format!("gemini {}: {}", severity, message), NOTE_MAX_CHARS).to_owned()));
                true
            }
            Some(Kind::Result) => {
                self.complete_message(events);
                if let Some(stats) = v.stats.get() {
                    events.push(Event::Usage(usage_of(stats)));
                }
                events.push(self.terminal(&v));
                true
            }
            _ => false,
        };
        if !understood {
            events.push(note_unreadable("unknown gemini line: ", line));
        }
    }

    fn message(&mut self, v: &mut Line, events: &mut Vec<Event>) -> bool {
        match v.role.as_str() {
            // The task echoed back.
            Some("user") => true,
            Some("assistant") => {
                let content = v.content.as_str().unwrap_or("");
                if v.delta.as_bool().unwrap_or(false) {
                    self.message.push_str(content);
                    self.streaming = true;
                    events.push(Event::TextDelta(content.to_owned()));
                } else {
                    self.message.clear();
                    self.message.push_str(content);
                    self.streaming = false;
                    events.push(Event::Text(content.to_owned()));
                }
                true
            }
            _ => false,
        }
    }

    /// Streamed text becomes one complete `text` when its message ends (a tool call or the
    /// result): the runtime opens a turn at a `text`, never at a delta.
    fn complete_message(&mut self, events: &mut Vec<Event>) {
        if self.streaming {
            events.push(Event::Text(self.message.clone()));
            self.streaming = false;
        }
    }

    fn terminal(&self, v: &Line) -> Event {
        if v.status.as_str() == Some("success") {
            return Event::TurnEnd(self.message.clone());
        }
        let error = v.error.get();
        let message =
            error.and_then(|e| e.message.as_str()).unwrap_or("Gemini CLI reported an error").to_owned();
        Event::failed(failure_kind(error.and_then(|e| e.kind.as_str()).unwrap_or(""), &message), message)
    }
}

/// A line's `type`.
#[derive(Clone, Copy)]
enum Kind {
    Init,
    Message,
    ToolUse,
    ToolResult,
    Error,
    Result,
}

impl Kind {
    /// Compared with `name_is`, by length first: a `match` on the strings calls `memcmp` for each
    /// candidate on wasm32.
    fn of(kind: &str) -> Option<Kind> {
        let k = match kind.len() {
            4 if name_is(kind, "init") => Kind::Init,
            5 if name_is(kind, "error") => Kind::Error,
            6 if name_is(kind, "result") => Kind::Result,
            7 if name_is(kind, "message") => Kind::Message,
            8 if name_is(kind, "tool_use") => Kind::ToolUse,
            11 if name_is(kind, "tool_result") => Kind::ToolResult,
            _ => return None,
        };
        Some(k)
    }
}

/// `result.stats`: `input` is the prompt without the cached part (`input_tokens` − `cached`),
/// `cached` is cache-read; Gemini CLI reports no cache writes and no separate thinking count, so
/// those are not reported (never zero).
pub fn usage_of(stats: &Stats) -> Usage {
    let cache_read = stats.cached.as_u64();
    let input =
        stats.input.as_u64().or_else(|| stats.input_tokens.as_u64().map(|i| i.saturating_sub(cache_read.unwrap_or(0))));
    Usage { input, output: stats.output_tokens.as_u64(), cache_read, cache_creation: None, thinking: None }
}

/// The API error is embedded in the message text (`{"error":{"code":401,…,"status":"UNAUTHENTICATED"}}`).
/// A word counts when the type or the message, lower-cased, holds it, or the message does with
/// its whitespace taken out; the first group with a word decides.
/// The type and the message are read in any case in place (`Words::found_in_any_case`), not in
/// lowercased copies: of the three `String`s made per failure line, only the compact one is left.
pub fn failure_kind(error_type: &str, message: &str) -> FailureKind {
    let mut compact = String::with_capacity(message.len());
    for piece in message.split(char::is_whitespace) {
        compact.push_str(piece);
    }
    // Every word looked for at once (`Words`), not a `contains` per word and text. A word without
    // whitespace that the message holds, its compact form holds too, and one with a space only
    // the message can hold: so the message is searched for the spaced words alone.
    let found = FAILURE_WORDS.found_in_any_case(error_type)
        | FAILURE_WORDS.found_among_any_case(message, SPACED_WORDS)
        | FAILURE_WORDS.found_among_any_case(&compact, !SPACED_WORDS);
    let kinds = [
        (AUTH_WORDS, FailureKind::Auth),
        (QUOTA_WORDS, FailureKind::Quota),
        (MAX_TURNS_WORDS, FailureKind::MaxTurns),
        (CANCELED_WORDS, FailureKind::Canceled),
    ];
    for (words, kind) in kinds {
        if found & words != 0 {
            return kind;
        }
    }
    FailureKind::HarnessError
}

/// The words [`failure_kind`] looks for, grouped by the kind they mean (the masks below).
const FAILURE_WORDS: Words<15> = Words::new([
    "\"code\":401",
    "\"code\":403",
    "unauthenticated",
    "permission_denied",
    "authentication",
    "api key not valid",
    "\"code\":429",
    "resource_exhausted",
    "quota",
    "rate limit",
    "turn limit",
    "maxsessionturns",
    "max_session_turns",
    "cancel",
    "abort",
]);
const AUTH_WORDS: u32 = 0b11_1111;
/// "api key not valid", "rate limit", "turn limit".
const SPACED_WORDS: u32 = 1 << 5 | 1 << 9 | 1 << 10;
const QUOTA_WORDS: u32 = 0b1111 << 6;
const MAX_TURNS_WORDS: u32 = 0b111 << 10;
const CANCELED_WORDS: u32 = 0b11 << 13;
