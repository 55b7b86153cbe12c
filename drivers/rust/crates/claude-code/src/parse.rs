//! Claude Code stream-json → driver events. Every line is read as JSON (a `result` line does not
//! start with its `"type"` key) into [`Line`], a typed view of only the members the driver uses:
//! serde_json skips the rest unread and borrows strings from the line, where building a `Value`
//! tree allocated every key and string of every line (most of a `parse` call's guest time).
//! Members are read leniently (`murmur_driver_abi::lenient`): the events are those the `Value`
//! reading gave (`value_parse`, kept as the tests' oracle). State that spans lines lives in
//! [`ClaudeParser`], so any batch split gives the same events.

use murmur_driver_abi::fast;
use murmur_driver_abi::lenient::{name_is, Arr, Field, Nested, ReadInPlace};
use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde::de::MapAccess;
use serde_json::Value;
use std::collections::BTreeMap;

/// The members of a line the driver reads, of every line type at once (each type reads its own),
/// filled in place (`ReadInPlace`): a derived visitor would build and move the whole struct, several
/// hundred bytes, for every line.
#[derive(Default)]
pub struct Line<'a> {
    pub kind: Field<'a>,
    pub subtype: Field<'a>,
    pub session_id: Field<'a>,
    pub api_key_source: Field<'a>,
    pub model: Field<'a>,
    pub attempt: Field<'a>,
    /// A string on `api_retry`; on `assistant`, set when the message describes a failed request.
    pub error: Field<'a>,
    pub error_status: Field<'a>,
    pub retry_delay_ms: Field<'a>,
    pub parent_tool_use_id: Field<'a>,
    pub event: Nested<StreamEvent<'a>>,
    pub message: Nested<Message>,
    pub usage: Nested<UsageJson<'a>>,
    pub result: Field<'a>,
    pub is_error: Field<'a>,
    pub api_error_status: Field<'a>,
    pub terminal_reason: Field<'a>,
    pub errors: Arr<Field<'a>>,
    pub rate_limit_info: Nested<RateLimitInfo<'a>>,
}

impl<'de> ReadInPlace<'de> for Line<'de> {
    fn member_index(name: &str) -> Option<u32> {
        // By length first: one comparison per name at most.
        let index = match name.len() {
            4 if name_is(name, "type") => 0,
            5 if name_is(name, "model") => 4,
            5 if name_is(name, "error") => 6,
            5 if name_is(name, "event") => 10,
            5 if name_is(name, "usage") => 12,
            6 if name_is(name, "result") => 13,
            6 if name_is(name, "errors") => 17,
            7 if name_is(name, "subtype") => 1,
            7 if name_is(name, "attempt") => 5,
            7 if name_is(name, "message") => 11,
            8 if name_is(name, "is_error") => 14,
            10 if name_is(name, "session_id") => 2,
            12 if name_is(name, "apiKeySource") => 3,
            12 if name_is(name, "error_status") => 7,
            14 if name_is(name, "retry_delay_ms") => 8,
            15 if name_is(name, "terminal_reason") => 16,
            15 if name_is(name, "rate_limit_info") => 18,
            16 if name_is(name, "api_error_status") => 15,
            18 if name_is(name, "parent_tool_use_id") => 9,
            _ => return None,
        };
        Some(index)
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            1 => self.subtype = map.next_value()?,
            2 => self.session_id = map.next_value()?,
            3 => self.api_key_source = map.next_value()?,
            4 => self.model = map.next_value()?,
            5 => self.attempt = map.next_value()?,
            6 => self.error = map.next_value()?,
            7 => self.error_status = map.next_value()?,
            8 => self.retry_delay_ms = map.next_value()?,
            9 => self.parent_tool_use_id = map.next_value()?,
            10 => map.next_value_seed(&mut self.event)?,
            11 => map.next_value_seed(&mut self.message)?,
            12 => map.next_value_seed(&mut self.usage)?,
            13 => self.result = map.next_value()?,
            14 => self.is_error = map.next_value()?,
            15 => self.api_error_status = map.next_value()?,
            16 => self.terminal_reason = map.next_value()?,
            17 => self.errors = map.next_value()?,
            _ => map.next_value_seed(&mut self.rate_limit_info)?,
        }
        Ok(())
    }
}

/// A nested object read in place (see [`Nested`]): `content_block` and `delta` inline, filled
/// member by member.
#[derive(Default)]
pub struct StreamEvent<'a> {
    kind: Field<'a>,
    index: Field<'a>,
    content_block: Nested<ContentBlockStart<'a>>,
    delta: Nested<Delta<'a>>,
}

impl<'de> ReadInPlace<'de> for StreamEvent<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            4 if name_is(name, "type") => Some(0),
            5 if name_is(name, "index") => Some(1),
            5 if name_is(name, "delta") => Some(3),
            13 if name_is(name, "content_block") => Some(2),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            1 => self.index = map.next_value()?,
            2 => map.next_value_seed(&mut self.content_block)?,
            _ => map.next_value_seed(&mut self.delta)?,
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct ContentBlockStart<'a> {
    kind: Field<'a>,
    id: Field<'a>,
    name: Field<'a>,
}

impl<'de> ReadInPlace<'de> for ContentBlockStart<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            2 if name_is(name, "id") => Some(1),
            4 if name_is(name, "type") => Some(0),
            4 if name_is(name, "name") => Some(2),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            1 => self.id = map.next_value()?,
            _ => self.name = map.next_value()?,
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct Delta<'a> {
    kind: Field<'a>,
    text: Field<'a>,
    thinking: Field<'a>,
    partial_json: Field<'a>,
}

impl<'de> ReadInPlace<'de> for Delta<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            4 if name_is(name, "type") => Some(0),
            4 if name_is(name, "text") => Some(1),
            8 if name_is(name, "thinking") => Some(2),
            12 if name_is(name, "partial_json") => Some(3),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.kind = map.next_value()?,
            1 => self.text = map.next_value()?,
            2 => self.thinking = map.next_value()?,
            _ => self.partial_json = map.next_value()?,
        }
        Ok(())
    }
}

/// A whole message's content blocks stay `Value`s: they are few, and an unknown one is reported
/// as its JSON text, a tool call's input as its compact JSON.
#[derive(Default)]
pub struct Message {
    content: Arr<Value>,
}

impl<'de> ReadInPlace<'de> for Message {
    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            7 if name_is(name, "content") => Some(0),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, _: u32, map: &mut A) -> Result<(), A::Error> {
        self.content = map.next_value()?;
        Ok(())
    }
}

#[derive(Default)]
pub struct UsageJson<'a> {
    input_tokens: Field<'a>,
    output_tokens: Field<'a>,
    cache_read_input_tokens: Field<'a>,
    cache_creation_input_tokens: Field<'a>,
    output_tokens_details: Nested<TokenDetails<'a>>,
}

impl<'de> ReadInPlace<'de> for UsageJson<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            12 if name_is(name, "input_tokens") => Some(0),
            13 if name_is(name, "output_tokens") => Some(1),
            21 if name_is(name, "output_tokens_details") => Some(4),
            23 if name_is(name, "cache_read_input_tokens") => Some(2),
            27 if name_is(name, "cache_creation_input_tokens") => Some(3),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.input_tokens = map.next_value()?,
            1 => self.output_tokens = map.next_value()?,
            2 => self.cache_read_input_tokens = map.next_value()?,
            3 => self.cache_creation_input_tokens = map.next_value()?,
            _ => map.next_value_seed(&mut self.output_tokens_details)?,
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct TokenDetails<'a> {
    thinking_tokens: Field<'a>,
}

impl<'de> ReadInPlace<'de> for TokenDetails<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            15 if name_is(name, "thinking_tokens") => Some(0),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, _: u32, map: &mut A) -> Result<(), A::Error> {
        self.thinking_tokens = map.next_value()?;
        Ok(())
    }
}

#[derive(Default)]
pub struct RateLimitInfo<'a> {
    rate_limit_type: Field<'a>,
    utilization: Field<'a>,
    resets_at: Field<'a>,
    status: Field<'a>,
}

impl<'de> ReadInPlace<'de> for RateLimitInfo<'de> {
    fn member_index(name: &str) -> Option<u32> {
        match name.len() {
            6 if name_is(name, "status") => Some(3),
            8 if name_is(name, "resetsAt") => Some(2),
            11 if name_is(name, "utilization") => Some(1),
            13 if name_is(name, "rateLimitType") => Some(0),
            _ => None,
        }
    }

    fn read_member<A: MapAccess<'de>>(&mut self, index: u32, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.rate_limit_type = map.next_value()?,
            1 => self.utilization = map.next_value()?,
            2 => self.resets_at = map.next_value()?,
            _ => self.status = map.next_value()?,
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct ClaudeParser {
    /// `mcp__<server>__` for the bridge named in `launch`; stripped from tool names.
    prefixes: Vec<String>,
    tools: Vec<String>,
    /// Tool-use blocks of the message being streamed: block index → (call id, input bytes so far).
    blocks: BTreeMap<u64, (String, u64)>,
    /// The sum of every `result` line's usage so far: each result reports its own turn only.
    total: Usage,
    /// The last session id reported, so a second `init` for the same session is not repeated.
    session: Option<String>,
    /// The subscription windows reported so far, merged, in first-seen order.
    windows: Vec<QuotaWindow>,
    /// The fast path's buffer for unescaped strings, reused from line to line.
    scratch: Vec<u8>,
}

impl ClaudeParser {
    pub fn for_bridge(bridge: Option<&Bridge>) -> ClaudeParser {
        let mut parser = ClaudeParser::default();
        if let Some(bridge) = bridge {
            parser.prefixes = vec![crate::tool_prefix(&bridge.server_name)];
            parser.tools = bridge.tool_names.clone();
        }
        parser
    }

    fn tool_name(&self, name: &str) -> String {
        if self.prefixes.is_empty() {
            return name.to_owned();
        }
        strip_tool_prefix(name, &self.prefixes, &self.tools)
    }

    pub fn parse_line(&mut self, line: &str, events: &mut Vec<Event>) {
        if is_blank(line) {
            return;
        }
        let mut line_members = Line::default();
        // The fast path reads nearly every line; whatever it gives up on, serde_json reads from
        // scratch, so a line reads as it always did (`fast`).
        if !fast::object_line_into(line, &mut line_members, &mut self.scratch) {
            return events.push(note_unreadable("unreadable claude line: ", line));
        }
        let v = &mut line_members;
        let understood = match v.kind.as_str() {
            Some("system") => self.system(v, events),
            Some("stream_event") => self.stream_event(v, events),
            Some("assistant") => self.assistant(v, events),
            Some("user") => self.user(v, events),
            Some("result") => self.result(v, events),
            Some("rate_limit_event") => self.rate_limit(v, events),
            // Answers to our own control requests (the interrupt) and keep-alives carry nothing.
            Some("control_response") | Some("keep_alive") => true,
            _ => false,
        };
        if !understood {
            events.push(note_unreadable("unknown claude line: ", line));
        }
    }

    fn system(&mut self, v: &mut Line, events: &mut Vec<Event>) -> bool {
        match v.subtype.as_str() {
            Some("init") => {
                let id = v.session_id.as_str().unwrap_or("");
                if self.session.as_deref() != Some(id) {
                    let id = id.to_owned();
                    self.session = Some(id.clone());
                    events.push(Event::SessionStarted(SessionInfo {
                        id,
                        auth: auth_of(v.api_key_source.as_str()),
                        model: v.model.take_string(),
                    }));
                }
                true
            }
            Some("api_retry") => {
                let attempt = v.attempt.as_u64().unwrap_or(1).min(u32::MAX as u64) as u32;
                events.push(Event::Retry(RetryInfo { attempt, reason: retry_reason(v) }));
                true
            }
            Some("status") | Some("thinking_tokens") => true,
            _ => false,
        }
    }

    fn stream_event(&mut self, v: &mut Line, events: &mut Vec<Event>) -> bool {
        if v.parent_tool_use_id.is_set() {
            // A subagent's stream is the harness's internal work, not the agent's turn.
            return true;
        }
        let event = match v.event.get_mut() {
            Some(e) => e,
            None => return false,
        };
        match event.kind.as_str() {
            Some("message_start") => {
                self.blocks.clear();
                true
            }
            Some("content_block_start") => {
                if let Some(block) = event.content_block.get_mut() {
                    if block.kind.as_str() == Some("tool_use") {
                        let id = block.id.take_string().unwrap_or_default();
                        let name = self.tool_name(block.name.as_str().unwrap_or(""));
                        self.blocks.insert(event.index.as_u64().unwrap_or(0), (id.clone(), 0));
                        events.push(Event::ToolCallStarted(ToolCallStart { id, name }));
                    }
                }
                true
            }
            Some("content_block_delta") => {
                let index = event.index.as_u64().unwrap_or(0);
                match event.delta.get_mut() {
                    Some(delta) => self.delta(index, delta, events),
                    None => self.delta(index, &mut Delta::default(), events),
                }
            }
            Some("content_block_stop") | Some("message_delta") | Some("message_stop") | Some("ping") => true,
            _ => false,
        }
    }

    fn delta(&mut self, index: u64, delta: &mut Delta, events: &mut Vec<Event>) -> bool {
        match delta.kind.as_str() {
            Some("text_delta") => events.push(Event::TextDelta(delta.text.take_string().unwrap_or_default())),
            Some("thinking_delta") => events.push(Event::ThinkingDelta(delta.thinking.take_string().unwrap_or_default())),
            Some("input_json_delta") => {
                let added = delta.partial_json.as_str().unwrap_or("").len() as u64;
                if let Some((id, bytes)) = self.blocks.get_mut(&index) {
                    *bytes += added;
                    events.push(Event::ToolCallProgress(ToolCallProgress { id: id.clone(), input_bytes: *bytes }));
                }
            }
            Some("signature_delta") | Some("citations_delta") => {}
            _ => return false,
        }
        true
    }

    fn assistant(&mut self, v: &mut Line, events: &mut Vec<Event>) -> bool {
        if v.parent_tool_use_id.is_set() {
            return true;
        }
        if v.error.is_set() {
            // A synthetic message describing a failed request (e.g. `authentication_failed`):
            // the `result` line reports the same failure, classified.
            return true;
        }
        let content = match v.message.get_mut().and_then(|m| m.content.0.take()) {
            Some(c) => c,
            None => return false,
        };
        for block in &content {
            match str_field(block, "type") {
                Some("text") => events.push(Event::Text(str_field(block, "text").unwrap_or("").to_owned())),
                Some("thinking") => {
                    events.push(Event::Thinking(str_field(block, "thinking").unwrap_or("").to_owned()))
                }
                Some("tool_use") => events.push(Event::ToolCall(ToolCallInfo {
                    id: str_field(block, "id").unwrap_or("").to_owned(),
                    name: self.tool_name(str_field(block, "name").unwrap_or("")),
                    input: block.get("input").map(json_text).unwrap_or_else(|| "{}".to_owned()),
                })),
                Some("redacted_thinking") => {}
                _ => events.push(note_unreadable("unknown assistant content: ", &block.to_string())),
            }
        }
        true
    }

    fn user(&mut self, v: &mut Line, events: &mut Vec<Event>) -> bool {
        if v.parent_tool_use_id.is_set() {
            return true;
        }
        // A user line's text (the task echoed, "[Request interrupted by user]") carries nothing
        // new; only tool results matter.
        if let Some(content) = v.message.get_mut().and_then(|m| m.content.0.take()) {
            for block in content.iter().filter(|b| str_field(b, "type") == Some("tool_result")) {
                events.push(Event::ToolResult(ToolResultInfo {
                    id: str_field(block, "tool_use_id").unwrap_or("").to_owned(),
                    output: flatten_content(block.get("content").unwrap_or(&Value::Null)),
                    is_error: block.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                }));
            }
        }
        true
    }

    fn result(&mut self, v: &mut Line, events: &mut Vec<Event>) -> bool {
        if let Some(usage) = v.usage.get() {
            self.total = self.total.plus(usage_of(usage));
            events.push(Event::Usage(self.total));
        }
        events.push(classify_result(v));
        true
    }

    fn rate_limit(&mut self, v: &mut Line, events: &mut Vec<Event>) -> bool {
        let window = match v.rate_limit_info.get().and_then(quota_window) {
            Some(w) => w,
            None => return false,
        };
        match self.windows.iter_mut().find(|w| w.name == window.name) {
            Some(existing) => *existing = window,
            None => self.windows.push(window),
        }
        events.push(Event::Quota(self.windows.clone()));
        true
    }
}

/// `subscription` only when the CLI says no API key is in use (`apiKeySource: "none"`).
pub fn auth_of(api_key_source: Option<&str>) -> String {
    match api_key_source {
        Some("none") => "subscription".to_owned(),
        Some(_) => "api-key".to_owned(),
        None => "unknown".to_owned(),
    }
}

fn retry_reason(v: &Line) -> String {
    let error = v.error.as_str().unwrap_or("request failed");
    let mut reason = match v.error_status.as_u64() {
        Some(status) => format!("{} (HTTP {})", error, status),
        None => format!("{} (no HTTP status: connection failed)", error),
    };
    if let Some(delay) = v.retry_delay_ms.as_u64() {
        reason.push_str(&format!(", next attempt in {} ms", delay));
    }
    reason
}

/// A `result` line's usage: Anthropic's `input_tokens` already excludes both cache counts, and
/// `thinking_tokens` is part of `output_tokens`. A missing member is not reported, never zero.
pub fn usage_of(usage: &UsageJson) -> Usage {
    Usage {
        input: usage.input_tokens.as_u64(),
        output: usage.output_tokens.as_u64(),
        cache_read: usage.cache_read_input_tokens.as_u64(),
        cache_creation: usage.cache_creation_input_tokens.as_u64(),
        thinking: usage.output_tokens_details.get().and_then(|d| d.thinking_tokens.as_u64()),
    }
}

/// Failures carry `subtype: "success"`, so the order is: `is_error`, then the HTTP status
/// (401/403 auth, 429 quota), then `terminal_reason` (`aborted_*` canceled), then the subtype
/// (`error_max_turns`), else a harness error.
pub fn classify_result(v: &mut Line) -> Event {
    let text = v.result.take_string().unwrap_or_default();
    if !v.is_error.as_bool().unwrap_or(false) {
        return Event::TurnEnd(text);
    }
    let status = v.api_error_status.as_u64();
    let terminal_reason = v.terminal_reason.as_str().unwrap_or("");
    let subtype = v.subtype.as_str().unwrap_or("");
    let kind = match status {
        Some(401) | Some(403) => FailureKind::Auth,
        Some(429) => FailureKind::Quota,
        _ if terminal_reason.starts_with("aborted") => FailureKind::Canceled,
        _ if subtype == "error_max_turns" => FailureKind::MaxTurns,
        _ => FailureKind::HarnessError,
    };
    let message = if !text.is_empty() {
        text
    } else if kind == FailureKind::Canceled {
        "the turn was interrupted".to_owned()
    } else if kind == FailureKind::MaxTurns {
        "Claude Code stopped at its turn limit".to_owned()
    } else {
        let errors: Vec<&str> =
            v.errors.get().map(|a| a.iter().filter_map(Field::as_str).collect()).unwrap_or_default();
        if errors.is_empty() {
            format!("Claude Code reported {} ({})", subtype, terminal_reason)
        } else {
            errors.join("; ")
        }
    };
    Event::failed(kind, message)
}

/// A tool result's content: a string as is; text blocks joined by newlines; other blocks named.
pub fn flatten_content(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match str_field(b, "type") {
                Some("text") => str_field(b, "text").unwrap_or("").to_owned(),
                Some(other) => format!("[{}]", other),
                None => b.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One `rate_limit_info` as a window. `rateLimitType` `five_hour` → `five-hour` (300 minutes),
/// `seven_day*` → `seven-day*` (10080 minutes); `status` `allowed` / `allowed_warning` /
/// `rejected` → ok / warning / exhausted; `resetsAt` seconds → milliseconds; `utilization` above 1
/// is a percentage and becomes a fraction.
pub fn quota_window(info: &RateLimitInfo) -> Option<QuotaWindow> {
    let kind = info.rate_limit_type.as_str().unwrap_or("");
    let name: String = kind
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c == '_' { '-' } else { c })
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
        .take(64)
        .collect();
    if !name.chars().next().map(|c| c.is_ascii_alphanumeric()).unwrap_or(false) {
        return None;
    }
    let window_minutes = if name == "five-hour" {
        Some(300)
    } else if name.starts_with("seven-day") {
        Some(10080)
    } else {
        None
    };
    let used = info.utilization.as_f64().map(|u| if u > 1.0 { u / 100.0 } else { u });
    let resets_at = info.resets_at.as_u64().map(|s| if s > 100_000_000_000 { s } else { s.saturating_mul(1000) });
    let state = match info.status.as_str() {
        Some("allowed") => Some(QuotaState::Ok),
        Some("allowed_warning") => Some(QuotaState::Warning),
        Some("rejected") => Some(QuotaState::Exhausted),
        _ => None,
    };
    Some(QuotaWindow {
        name,
        used: used.filter(|u| u.is_finite() && (0.0..=1.0).contains(u)),
        resets_at,
        window_minutes,
        state,
    })
}
