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
pub struct GeminiParser {
    /// Names Gemini CLI may give a bridge tool (`mcp__<server>__`, `mcp_<server>_`, `<server>__`).
    prefixes: Vec<String>,
    tools: Vec<String>,
    /// The assistant text streamed since the last tool call: completed as one `text` at the next
    /// tool call or result, and the turn's final answer.
    message: String,
    streaming: bool,
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
        if line.trim().is_empty() {
            return;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            _ => return events.push(note_unreadable("unreadable gemini line: ", line)),
        };
        let understood = match str_field(&v, "type") {
            Some("init") => {
                events.push(Event::SessionStarted(SessionInfo {
                    id: str_field(&v, "session_id").unwrap_or("").to_owned(),
                    // Gemini CLI does not say how it bills in its event stream.
                    auth: "unknown".to_owned(),
                    model: str_field(&v, "model").map(str::to_owned),
                }));
                true
            }
            Some("message") => self.message(&v, events),
            Some("tool_use") => {
                self.complete_message(events);
                self.message.clear();
                events.push(Event::ToolCall(ToolCallInfo {
                    id: str_field(&v, "tool_id").unwrap_or("").to_owned(),
                    name: if self.prefixes.is_empty() {
                        str_field(&v, "tool_name").unwrap_or("").to_owned()
                    } else {
                        strip_tool_prefix(str_field(&v, "tool_name").unwrap_or(""), &self.prefixes, &self.tools)
                    },
                    input: v.get("parameters").map(Value::to_string).unwrap_or_else(|| "{}".to_owned()),
                }));
                true
            }
            Some("tool_result") => {
                let is_error = str_field(&v, "status") != Some("success");
                let error = v.get("error").and_then(|e| str_field(e, "message"));
                let output = match (str_field(&v, "output"), error) {
                    (Some(out), _) if !is_error || error.is_none() => out.to_owned(),
                    (_, Some(message)) => message.to_owned(),
                    (_, None) => String::new(),
                };
                events.push(Event::ToolResult(ToolResultInfo {
                    id: str_field(&v, "tool_id").unwrap_or("").to_owned(),
                    output,
                    is_error,
                }));
                true
            }
            Some("error") => {
                // A warning or a non-fatal error the CLI recovered from; the result decides.
                let severity = str_field(&v, "severity").unwrap_or("error");
                let message = str_field(&v, "message").unwrap_or("");
                events.push(Event::Note(cut_chars(&format!("gemini {}: {}", severity, message), NOTE_MAX_CHARS).to_owned()));
                true
            }
            Some("result") => {
                self.complete_message(events);
                if let Some(stats) = v.get("stats").filter(|s| s.is_object()) {
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

    fn message(&mut self, v: &Value, events: &mut Vec<Event>) -> bool {
        let content = str_field(v, "content").unwrap_or("");
        match str_field(v, "role") {
            // The task echoed back.
            Some("user") => true,
            Some("assistant") => {
                if v.get("delta").and_then(Value::as_bool).unwrap_or(false) {
                    self.message.push_str(content);
                    self.streaming = true;
                    events.push(Event::TextDelta(content.to_owned()));
                } else {
                    self.message = content.to_owned();
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

    fn terminal(&self, v: &Value) -> Event {
        if str_field(v, "status") == Some("success") {
            return Event::TurnEnd(self.message.clone());
        }
        let error = v.get("error").unwrap_or(&Value::Null);
        let message = str_field(error, "message").unwrap_or("Gemini CLI reported an error").to_owned();
        Event::failed(failure_kind(str_field(error, "type").unwrap_or(""), &message), message)
    }
}

/// `result.stats`: `input` is the prompt without the cached part (`input_tokens` − `cached`),
/// `cached` is cache-read; Gemini CLI reports no cache writes and no separate thinking count, so
/// those are not reported (never zero).
pub fn usage_of(stats: &Value) -> Usage {
    let cache_read = u64_field(stats, "cached");
    let input = u64_field(stats, "input")
        .or_else(|| u64_field(stats, "input_tokens").map(|i| i.saturating_sub(cache_read.unwrap_or(0))));
    Usage { input, output: u64_field(stats, "output_tokens"), cache_read, cache_creation: None, thinking: None }
}
