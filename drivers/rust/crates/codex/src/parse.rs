//! `codex exec --json` events → driver events. Every line is read into [`Line`], a typed view of
//! only the members the driver uses: serde_json skips the rest unread and borrows strings from
//! the line, where building a `Value` tree allocated every key and string of every line. Members
//! are read leniently (`murmur_driver_abi::lenient`): the events are those the `Value` reading gave
//! (`value_parse`, kept as the tests' oracle). What the driver reports as JSON text (a tool's
//! arguments and result) stays a `Value`, built only on the lines that carry it. State that spans
//! lines lives in [`CodexParser`], so any batch split gives the same events.

use murmur_driver_abi::fast::{self, NestedInPlace};
use murmur_driver_abi::json_text::JsonText;
use murmur_driver_abi::lenient::{name_is, Field, Json, Nested, ReadInPlace};
use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde::de::MapAccess;
use serde_json::Value;

/// The members of a line the driver reads, of every line type at once.
/// Filled in place (`ReadInPlace`), not built by a derived visitor and moved out for every line.
#[derive(Default)]
pub struct Line<'a> {
    kind: Field<'a>,
    thread_id: Field<'a>,
    item: Nested<Item<'a>>,
    usage: Nested<UsageJson<'a>>,
    /// An object on `turn.failed`.
    error: Nested<ErrorJson<'a>>,
    /// A string on `error`.
    message: Field<'a>,
}

impl<'de> ReadInPlace<'de> for Line<'de> {
    fn nested(&mut self, index: u32) -> Option<&mut dyn NestedInPlace<'de>> {
        Some(match index {
            2 => &mut self.item,
            3 => &mut self.usage,
            4 => &mut self.error,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        // By length first: one comparison per name at most.
        let index = match name.len() {
            4 if name_is(name, "type") => 0,
            4 if name_is(name, "item") => 2,
            5 if name_is(name, "usage") => 3,
            5 if name_is(name, "error") => 4,
            7 if name_is(name, "message") => 5,
            9 if name_is(name, "thread_id") => 1,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            1 => self.thread_id = map.next_value()?,
            2 => map.next_value_seed(&mut self.item)?,
            3 => map.next_value_seed(&mut self.usage)?,
            4 => map.next_value_seed(&mut self.error)?,
            _ => self.message = map.next_value()?,
        }
        Ok(())
    }

    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.kind,
            1 => &mut self.thread_id,
            5 => &mut self.message,
            _ => return None,
        })
    }
}

/// A line's `item`, read in place (`Nested`).
#[derive(Default)]
pub struct Item<'a> {
    id: Field<'a>,
    kind: Field<'a>,
    text: Field<'a>,
    server: Field<'a>,
    tool: Field<'a>,
    /// Kept as its text when it is already what serde_json writes (`JsonText`).
    arguments: JsonText<'a>,
    result: Json,
    error: Nested<ErrorJson<'a>>,
    status: Field<'a>,
    command: Json,
    exit_code: Field<'a>,
    aggregated_output: Field<'a>,
}

impl<'de> ReadInPlace<'de> for Item<'de> {
    fn nested(&mut self, index: u32) -> Option<&mut dyn NestedInPlace<'de>> {
        Some(match index {
            7 => &mut self.error,
            _ => return None,
        })
    }

    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.id,
            1 => &mut self.kind,
            2 => &mut self.text,
            3 => &mut self.server,
            4 => &mut self.tool,
            8 => &mut self.status,
            10 => &mut self.exit_code,
            11 => &mut self.aggregated_output,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        // By length first: one comparison per name at most.
        let index = match name.len() {
            2 if name_is(name, "id") => 0,
            4 if name_is(name, "type") => 1,
            4 if name_is(name, "text") => 2,
            4 if name_is(name, "tool") => 4,
            5 if name_is(name, "error") => 7,
            6 if name_is(name, "server") => 3,
            6 if name_is(name, "result") => 6,
            6 if name_is(name, "status") => 8,
            7 if name_is(name, "command") => 9,
            9 if name_is(name, "arguments") => 5,
            9 if name_is(name, "exit_code") => 10,
            17 if name_is(name, "aggregated_output") => 11,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.id = map.next_value()?,
            1 => self.kind = map.next_value()?,
            2 => self.text = map.next_value()?,
            3 => self.server = map.next_value()?,
            4 => self.tool = map.next_value()?,
            5 => self.arguments = map.next_value()?,
            6 => self.result = map.next_value()?,
            7 => map.next_value_seed(&mut self.error)?,
            8 => self.status = map.next_value()?,
            9 => self.command = map.next_value()?,
            10 => self.exit_code = map.next_value()?,
            _ => self.aggregated_output = map.next_value()?,
        }
        Ok(())
    }
}

/// A `turn.failed` line's or an item's `error`, read in place (`Nested`).
#[derive(Default)]
pub struct ErrorJson<'a> {
    message: Field<'a>,
}

impl<'de> ReadInPlace<'de> for ErrorJson<'de> {
    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.message,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            7 if name_is(name, "message") => Some(0),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, _: u32, map: &mut A) -> Result<(), A::Error> {
        self.message = map.next_value()?;
        Ok(())
    }
}

/// A `turn.completed` line's `usage`, read in place (`Nested`).
#[derive(Default)]
pub struct UsageJson<'a> {
    input_tokens: Field<'a>,
    cached_input_tokens: Field<'a>,
    cache_write_input_tokens: Field<'a>,
    output_tokens: Field<'a>,
    reasoning_output_tokens: Field<'a>,
}

impl<'de> ReadInPlace<'de> for UsageJson<'de> {
    fn field(&mut self, index: u32) -> Option<&mut Field<'de>> {
        Some(match index {
            0 => &mut self.input_tokens,
            1 => &mut self.cached_input_tokens,
            2 => &mut self.cache_write_input_tokens,
            3 => &mut self.output_tokens,
            4 => &mut self.reasoning_output_tokens,
            _ => return None,
        })
    }

    fn member_index(name: &str) -> Option<u32> {
        let index = match name.len() {
            12 if name_is(name, "input_tokens") => 0,
            13 if name_is(name, "output_tokens") => 3,
            19 if name_is(name, "cached_input_tokens") => 1,
            23 if name_is(name, "reasoning_output_tokens") => 4,
            24 if name_is(name, "cache_write_input_tokens") => 2,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.input_tokens = map.next_value()?,
            1 => self.cached_input_tokens = map.next_value()?,
            2 => self.cache_write_input_tokens = map.next_value()?,
            3 => self.output_tokens = map.next_value()?,
            _ => self.reasoning_output_tokens = map.next_value()?,
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct CodexParser {
    /// The bridge's server name from `launch`: its tools are reported by their bare names.
    server: Option<String>,
    /// The text of the last completed agent message: the turn's final answer.
    last_message: String,
    /// The sum of every `turn.completed` usage so far (one per process in practice).
    total: Usage,
    /// The last fatal `error` message, for a run that ends without `turn.failed`.
    last_error: Option<String>,
    /// The fast path's buffer for unescaped strings, reused from line to line.
    scratch: Vec<u8>,
}

/// The string, or "" when absent or not a string, owned.
fn string_or_empty(f: &mut Field) -> String {
    f.take_string().unwrap_or_default()
}

impl CodexParser {
    pub fn for_bridge(bridge: Option<&Bridge>) -> CodexParser {
        CodexParser { server: bridge.map(|b| b.server_name.clone()), ..CodexParser::default() }
    }

    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    pub fn parse_line(&mut self, line: &str, events: &mut Vec<Event>) {
        if is_blank(line) {
            return;
        }
        let mut line_members = Line::default();
        // The fast path reads nearly every line; whatever it gives up on, serde_json reads from
        // scratch, so a line reads as it always did (`murmur_driver_abi::fast`).
        if !fast::object_line_into(line, &mut line_members, &mut self.scratch) {
            return events.push(note_unreadable("unreadable codex line: ", line));
        }
        let v = &mut line_members;
        let understood = match v.kind.as_str().and_then(Kind::of) {
            Some(Kind::ThreadStarted) => match v.thread_id.take_string() {
                Some(id) => {
                    // Codex does not say how it bills in its event stream.
                    events.push(Event::SessionStarted(SessionInfo { id, auth: "unknown".to_owned(), model: None }));
                    true
                }
                None => false,
            },
            Some(Kind::TurnStarted) => {
                self.last_message.clear();
                true
            }
            Some(phase @ (Kind::ItemStarted | Kind::ItemUpdated | Kind::ItemCompleted)) => match v.item.get_mut() {
                Some(item) => self.item(phase, item, line, events),
                // Not an object: its type reads as absent, which no branch knows.
                None => false,
            },
            Some(Kind::TurnCompleted) => {
                if let Some(usage) = v.usage.get() {
                    self.total = self.total.plus(usage_of(usage));
                    events.push(Event::Usage(self.total));
                }
                events.push(Event::TurnEnd(self.last_message.clone()));
                true
            }
            Some(Kind::TurnFailed) => {
                let message = v
                    .error
                    .get()
                    .and_then(|e| e.message.as_str())
                    .or(self.last_error.as_deref())
                    .unwrap_or("Codex reported a failed turn")
                    .to_owned();
                events.push(Event::failed(failure_kind(&message), message));
                true
            }
            Some(Kind::Error) => {
                let message = v.message.take_string().unwrap_or_default();
                match reconnecting(&message) {
                    Some(retry) => events.push(Event::Retry(retry)),
                    // A fatal stream error; `turn.failed` follows with the same text.
                    None => self.last_error = Some(message),
                }
                true
            }
            _ => false,
        };
        if !understood {
            events.push(note_unreadable("unknown codex line: ", line));
        }
    }

    fn item(&mut self, phase: Kind, item: &mut Item, line: &str, events: &mut Vec<Event>) -> bool {
        let started = phase == Kind::ItemStarted;
        let completed = phase == Kind::ItemCompleted;
        match item.kind.as_str().and_then(ItemKind::of) {
            Some(ItemKind::AgentMessage) => {
                if completed {
                    let text = string_or_empty(&mut item.text);
                    self.last_message.clone_from(&text);
                    events.push(Event::Text(text));
                }
            }
            Some(ItemKind::Reasoning) => {
                if completed {
                    events.push(Event::Thinking(string_or_empty(&mut item.text)));
                }
            }
            Some(ItemKind::McpToolCall) => {
                let id = string_or_empty(&mut item.id);
                if started {
                    let server = item.server.as_str().unwrap_or("");
                    let tool = item.tool.as_str().unwrap_or("");
                    let name = if self.server.as_deref() == Some(server) || server.is_empty() {
                        tool.to_owned()
                    } else {
                        format!("{}/{}", server, tool)
                    };
                    let input = item.arguments.text().unwrap_or_else(|| "{}".to_owned());
                    events.push(Event::ToolCall(ToolCallInfo { id, name, input }));
                } else if completed {
                    let error = item.error.get().and_then(|e| e.message.as_str());
                    let output = match error {
                        Some(message) => message.to_owned(),
                        None => mcp_result_text(item.result.get().unwrap_or(&Value::Null)),
                    };
                    let is_error = error.is_some() || item.status.as_str() == Some("failed");
                    events.push(Event::ToolResult(ToolResultInfo { id, output, is_error }));
                }
            }
            Some(ItemKind::CommandExecution) => {
                let id = string_or_empty(&mut item.id);
                if started {
                    let input = serde_json::json!({ "command": item.command.0.take().map(|c| *c).unwrap_or(Value::Null) });
                    events.push(Event::ToolCall(ToolCallInfo {
                        id,
                        name: "command_execution".to_owned(),
                        input: json_text(&input),
                    }));
                } else if completed {
                    let exit = item.exit_code.as_i64();
                    events.push(Event::ToolResult(ToolResultInfo {
                        id,
                        output: string_or_empty(&mut item.aggregated_output),
                        is_error: exit.map(|c| c != 0).unwrap_or(false) || item.status.as_str() == Some("failed"),
                    }));
                }
            }
            Some(kind @ (ItemKind::FileChange | ItemKind::WebSearch)) => {
                let name = if kind == ItemKind::FileChange { "file_change" } else { "web_search" };
                // Reported once, complete: a call and its result together, the call's input being
                // the whole item but its id, type and status. Rare, so the line is read again
                // whole for it.
                if completed {
                    let whole = serde_json::from_str::<Value>(line).ok();
                    let mut input = whole.as_ref().and_then(|v| v.get("item")).cloned().unwrap_or(Value::Null);
                    if let Some(map) = input.as_object_mut() {
                        map.remove("id");
                        map.remove("type");
                        map.remove("status");
                    }
                    let id = string_or_empty(&mut item.id);
                    events.push(Event::ToolCall(ToolCallInfo {
                        id: id.clone(),
                        name: name.to_owned(),
                        input: json_text(&input),
                    }));
                    events.push(Event::ToolResult(ToolResultInfo {
                        id,
                        output: item.status.as_str().unwrap_or("completed").to_owned(),
                        is_error: item.status.as_str() == Some("failed"),
                    }));
                }
            }
            // A plan update carries nothing for the runtime; an `error` item is a non-fatal
            // warning (e.g. unknown model metadata): fatal errors come as `error` / `turn.failed`.
            Some(ItemKind::TodoList) | Some(ItemKind::Error) => {}
            _ => return false,
        }
        true
    }
}

/// A line's `type`.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    ThreadStarted,
    TurnStarted,
    ItemStarted,
    ItemUpdated,
    ItemCompleted,
    TurnCompleted,
    TurnFailed,
    Error,
}

impl Kind {
    /// Compared with `name_is`, by length first: a `match` on the strings calls `memcmp` for each
    /// candidate on wasm32 (3.5 % of a codex line's CPU at batch 16).
    fn of(kind: &str) -> Option<Kind> {
        let k = match kind.len() {
            5 if name_is(kind, "error") => Kind::Error,
            11 if name_is(kind, "turn.failed") => Kind::TurnFailed,
            12 if name_is(kind, "turn.started") => Kind::TurnStarted,
            12 if name_is(kind, "item.started") => Kind::ItemStarted,
            12 if name_is(kind, "item.updated") => Kind::ItemUpdated,
            14 if name_is(kind, "item.completed") => Kind::ItemCompleted,
            14 if name_is(kind, "thread.started") => Kind::ThreadStarted,
            14 if name_is(kind, "turn.completed") => Kind::TurnCompleted,
            _ => return None,
        };
        Some(k)
    }
}

/// An item's `type`.
#[derive(Clone, Copy, PartialEq)]
enum ItemKind {
    AgentMessage,
    Reasoning,
    McpToolCall,
    CommandExecution,
    FileChange,
    WebSearch,
    TodoList,
    Error,
}

impl ItemKind {
    /// As [`Kind::of`].
    fn of(kind: &str) -> Option<ItemKind> {
        let k = match kind.len() {
            5 if name_is(kind, "error") => ItemKind::Error,
            9 if name_is(kind, "reasoning") => ItemKind::Reasoning,
            9 if name_is(kind, "todo_list") => ItemKind::TodoList,
            10 if name_is(kind, "web_search") => ItemKind::WebSearch,
            11 if name_is(kind, "file_change") => ItemKind::FileChange,
            13 if name_is(kind, "agent_message") => ItemKind::AgentMessage,
            13 if name_is(kind, "mcp_tool_call") => ItemKind::McpToolCall,
            17 if name_is(kind, "command_execution") => ItemKind::CommandExecution,
            _ => return None,
        };
        Some(k)
    }
}

/// Codex's usage folds cached prompt tokens into `input_tokens`; they move out into
/// `cache-read` / `cache-creation` so `input` is the uncached prompt alone. `output_tokens`
/// includes `reasoning_output_tokens`, which is reported as `thinking`.
pub fn usage_of(usage: &UsageJson) -> Usage {
    let cache_read = usage.cached_input_tokens.as_u64();
    let cache_creation = usage.cache_write_input_tokens.as_u64();
    let input = usage
        .input_tokens
        .as_u64()
        .map(|i| i.saturating_sub(cache_read.unwrap_or(0)).saturating_sub(cache_creation.unwrap_or(0)));
    Usage {
        input,
        output: usage.output_tokens.as_u64(),
        cache_read,
        cache_creation,
        thinking: usage.reasoning_output_tokens.as_u64(),
    }
}

/// `Reconnecting... 1/5 (reason)` is Codex retrying its provider.
pub fn reconnecting(message: &str) -> Option<RetryInfo> {
    let rest = message.strip_prefix("Reconnecting...")?.trim_start();
    let (count, reason) = match rest.find(' ') {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let attempt = count.split('/').next()?.parse::<u32>().ok()?;
    let reason = reason.strip_prefix('(').and_then(|r| r.strip_suffix(')')).unwrap_or(reason);
    Some(RetryInfo { attempt, reason: reason.to_owned() })
}

/// Codex puts the HTTP status only in message text, worded differently by the code path that
/// failed: "unexpected status 401 Unauthorized: …" (a refused request, retried as
/// "Reconnecting…"), "exceeded retry limit, last status: 429 Too Many Requests" (Codex 0.169.0
/// after its request retries). The status number decides; words cover a message without one.
/// Read in any case in place, not in a lowercased copy (a `String` per failure line).
pub fn failure_kind(message: &str) -> FailureKind {
    match http_status(message) {
        Some(401) | Some(403) => return FailureKind::Auth,
        Some(429) => return FailureKind::Quota,
        _ => {}
    }
    // Every word looked for at once (`Words`), not a `contains` per word.
    let found = FAILURE_WORDS.found_in_any_case(message);
    if found & AUTH_WORDS != 0 {
        FailureKind::Auth
    } else if found & QUOTA_WORDS != 0 {
        FailureKind::Quota
    } else if found & CANCELED_WORDS != 0 {
        FailureKind::Canceled
    } else {
        FailureKind::HarnessError
    }
}

/// The words [`failure_kind`] looks for, grouped by the kind they mean (the masks below).
const FAILURE_WORDS: Words<9> = Words::new([
    "unauthorized",
    "forbidden",
    "too many requests",
    "usage limit",
    "rate limit",
    "quota",
    "interrupted",
    "cancelled",
    "canceled",
]);
const AUTH_WORDS: u32 = 0b11;
const QUOTA_WORDS: u32 = 0b1111 << 2;
const CANCELED_WORDS: u32 = 0b111 << 6;

/// The three digits after the first "status" (optionally followed by `:`), e.g. 429 in
/// "last status: 429 Too Many Requests". The word is read in any case ("Status: 429").
pub fn http_status(message: &str) -> Option<u16> {
    let b = message.as_bytes();
    let word = b"status";
    let mut at = 0;
    // Each "status" in turn, by its first byte (not `str::find`'s two-way searcher).
    while let Some(i) = b[at..].iter().position(|&c| c | 0x20 == b's').map(|i| at + i) {
        at = i + 1;
        if b.len() - i < word.len() || !b[i..i + word.len()].eq_ignore_ascii_case(word) {
            continue;
        }
        let mut rest = i + word.len();
        while rest < b.len() && (b[rest] == b':' || b[rest] == b' ') {
            rest += 1;
        }
        let digits = b[rest..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 3 {
            return Some(b[rest..rest + 3].iter().fold(0, |n, &d| n * 10 + (d - b'0') as u16));
        }
        at = i + word.len();
    }
    None
}

/// An MCP tool result: its text blocks joined by newlines, other blocks named; JSON otherwise.
pub fn mcp_result_text(result: &Value) -> String {
    match result.get("content").and_then(Value::as_array) {
        Some(blocks) => blocks
            .iter()
            .map(|b| match str_field(b, "type") {
                Some("text") => str_field(b, "text").unwrap_or("").to_owned(),
                Some(other) => format!("[{}]", other),
                None => b.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        None if result.is_null() => String::new(),
        None => result.to_string(),
    }
}
