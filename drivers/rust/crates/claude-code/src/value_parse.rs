//! The oracle for `parse` (tests only): the driver's earlier reading of each line as a whole
//! `serde_json::Value` tree, kept unchanged. `parse` reads typed, borrowed members instead (it
//! is several times faster in the guest) and must give the same events for every line; the
//! differential tests in `oracle_tests` check that on the transcripts and on mutations of them.

use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde_json::Value;
use std::collections::BTreeMap;

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
        if line.trim().is_empty() {
            return;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            _ => return events.push(note_unreadable("unreadable claude line: ", line)),
        };
        let understood = match str_field(&v, "type") {
            Some("system") => self.system(&v, events),
            Some("stream_event") => self.stream_event(&v, events),
            Some("assistant") => self.assistant(&v, events),
            Some("user") => self.user(&v, events),
            Some("result") => self.result(&v, events),
            Some("rate_limit_event") => self.rate_limit(&v, events),
            // Answers to our own control requests (the interrupt) and keep-alives carry nothing.
            Some("control_response") | Some("keep_alive") => true,
            _ => false,
        };
        if !understood {
            events.push(note_unreadable("unknown claude line: ", line));
        }
    }

    fn system(&mut self, v: &Value, events: &mut Vec<Event>) -> bool {
        match str_field(v, "subtype") {
            Some("init") => {
                let id = str_field(v, "session_id").unwrap_or("").to_owned();
                if self.session.as_deref() != Some(id.as_str()) {
                    self.session = Some(id.clone());
                    events.push(Event::SessionStarted(SessionInfo {
                        id,
                        auth: auth_of(str_field(v, "apiKeySource")),
                        model: str_field(v, "model").map(str::to_owned),
                    }));
                }
                true
            }
            Some("api_retry") => {
                let attempt = u64_field(v, "attempt").unwrap_or(1).min(u32::MAX as u64) as u32;
                events.push(Event::Retry(RetryInfo { attempt, reason: retry_reason(v) }));
                true
            }
            Some("status") | Some("thinking_tokens") => true,
            _ => false,
        }
    }

    fn stream_event(&mut self, v: &Value, events: &mut Vec<Event>) -> bool {
        if is_subagent(v) {
            // A subagent's stream is the harness's internal work, not the agent's turn.
            return true;
        }
        let event = match v.get("event") {
            Some(e) => e,
            None => return false,
        };
        match str_field(event, "type") {
            Some("message_start") => {
                self.blocks.clear();
                true
            }
            Some("content_block_start") => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                if str_field(block, "type") == Some("tool_use") {
                    let id = str_field(block, "id").unwrap_or("").to_owned();
                    let name = self.tool_name(str_field(block, "name").unwrap_or(""));
                    self.blocks.insert(u64_field(event, "index").unwrap_or(0), (id.clone(), 0));
                    events.push(Event::ToolCallStarted(ToolCallStart { id, name }));
                }
                true
            }
            Some("content_block_delta") => self.delta(event, events),
            Some("content_block_stop") | Some("message_delta") | Some("message_stop") | Some("ping") => true,
            _ => false,
        }
    }

    fn delta(&mut self, event: &Value, events: &mut Vec<Event>) -> bool {
        let delta = event.get("delta").unwrap_or(&Value::Null);
        match str_field(delta, "type") {
            Some("text_delta") => events.push(Event::TextDelta(str_field(delta, "text").unwrap_or("").to_owned())),
            Some("thinking_delta") => {
                events.push(Event::ThinkingDelta(str_field(delta, "thinking").unwrap_or("").to_owned()))
            }
            Some("input_json_delta") => {
                let index = u64_field(event, "index").unwrap_or(0);
                let added = str_field(delta, "partial_json").unwrap_or("").len() as u64;
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

    fn assistant(&mut self, v: &Value, events: &mut Vec<Event>) -> bool {
        if is_subagent(v) {
            return true;
        }
        if v.get("error").map(|e| !e.is_null()).unwrap_or(false) {
            // A synthetic message describing a failed request (e.g. `authentication_failed`):
            // the `result` line reports the same failure, classified.
            return true;
        }
        let content = match v.get("message").and_then(|m| m.get("content")).and_then(Value::as_array) {
            Some(c) => c,
            None => return false,
        };
        for block in content {
            match str_field(block, "type") {
                Some("text") => events.push(Event::Text(str_field(block, "text").unwrap_or("").to_owned())),
                Some("thinking") => {
                    events.push(Event::Thinking(str_field(block, "thinking").unwrap_or("").to_owned()))
                }
                Some("tool_use") => events.push(Event::ToolCall(ToolCallInfo {
                    id: str_field(block, "id").unwrap_or("").to_owned(),
                    name: self.tool_name(str_field(block, "name").unwrap_or("")),
                    input: block.get("input").map(Value::to_string).unwrap_or_else(|| "{}".to_owned()),
                })),
                Some("redacted_thinking") => {}
                _ => events.push(note_unreadable("unknown assistant content: ", &block.to_string())),
            }
        }
        true
    }

    fn user(&mut self, v: &Value, events: &mut Vec<Event>) -> bool {
        if is_subagent(v) {
            return true;
        }
        // A user line's text (the task echoed, "[Request interrupted by user]") carries nothing
        // new; only tool results matter.
        if let Some(content) = v.get("message").and_then(|m| m.get("content")).and_then(Value::as_array) {
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

    fn result(&mut self, v: &Value, events: &mut Vec<Event>) -> bool {
        if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
            self.total = self.total.plus(usage_of(usage));
            events.push(Event::Usage(self.total));
        }
        events.push(classify_result(v));
        true
    }

    fn rate_limit(&mut self, v: &Value, events: &mut Vec<Event>) -> bool {
        let info = match v.get("rate_limit_info") {
            Some(i) if i.is_object() => i,
            _ => return false,
        };
        let window = match quota_window(info) {
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

fn is_subagent(v: &Value) -> bool {
    v.get("parent_tool_use_id").map(|p| !p.is_null()).unwrap_or(false)
}

/// `subscription` only when the CLI says no API key is in use (`apiKeySource: "none"`).
pub fn auth_of(api_key_source: Option<&str>) -> String {
    match api_key_source {
        Some("none") => "subscription".to_owned(),
        Some(_) => "api-key".to_owned(),
        None => "unknown".to_owned(),
    }
}

fn retry_reason(v: &Value) -> String {
    let error = str_field(v, "error").unwrap_or("request failed");
    let mut reason = match u64_field(v, "error_status") {
        Some(status) => format!("{} (HTTP {})", error, status),
        None => format!("{} (no HTTP status: connection failed)", error),
    };
    if let Some(delay) = u64_field(v, "retry_delay_ms") {
        reason.push_str(&format!(", next attempt in {} ms", delay));
    }
    reason
}

/// A `result` line's usage: Anthropic's `input_tokens` already excludes both cache counts, and
/// `thinking_tokens` is part of `output_tokens`. A missing member is not reported, never zero.
pub fn usage_of(usage: &Value) -> Usage {
    Usage {
        input: u64_field(usage, "input_tokens"),
        output: u64_field(usage, "output_tokens"),
        cache_read: u64_field(usage, "cache_read_input_tokens"),
        cache_creation: u64_field(usage, "cache_creation_input_tokens"),
        thinking: usage.get("output_tokens_details").and_then(|d| u64_field(d, "thinking_tokens")),
    }
}

/// Failures carry `subtype: "success"`, so the order is: `is_error`, then the HTTP status
/// (401/403 auth, 429 quota), then `terminal_reason` (`aborted_*` canceled), then the subtype
/// (`error_max_turns`), else a harness error.
pub fn classify_result(v: &Value) -> Event {
    let text = str_field(v, "result").unwrap_or("").to_owned();
    if !v.get("is_error").and_then(Value::as_bool).unwrap_or(false) {
        return Event::TurnEnd(text);
    }
    let status = u64_field(v, "api_error_status");
    let terminal_reason = str_field(v, "terminal_reason").unwrap_or("");
    let subtype = str_field(v, "subtype").unwrap_or("");
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
            v.get("errors").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
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
pub fn quota_window(info: &Value) -> Option<QuotaWindow> {
    let kind = str_field(info, "rateLimitType").unwrap_or("");
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
    let used = info.get("utilization").and_then(Value::as_f64).map(|u| if u > 1.0 { u / 100.0 } else { u });
    let resets_at = u64_field(info, "resetsAt").map(|s| if s > 100_000_000_000 { s } else { s.saturating_mul(1000) });
    let state = match str_field(info, "status") {
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
