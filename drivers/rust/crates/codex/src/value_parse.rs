//! The oracle for `parse` (tests only): the driver's earlier reading of each line as a whole
//! `serde_json::Value` tree, kept unchanged but for the string helpers it shares with `parse`
//! (`reconnecting`, `failure_kind`, `mcp_result_text`, which read no line). `parse` reads typed,
//! borrowed members instead and must give the same events for every line; the differential tests
//! in `oracle_tests` check that on the transcripts and on mutations of them.

use super::parse::{failure_kind, mcp_result_text, reconnecting};
use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde_json::Value;

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
}

impl CodexParser {
    pub fn for_bridge(bridge: Option<&Bridge>) -> CodexParser {
        CodexParser { server: bridge.map(|b| b.server_name.clone()), ..CodexParser::default() }
    }

    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    pub fn parse_line(&mut self, line: &str, events: &mut Vec<Event>) {
        if line.trim().is_empty() {
            return;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            _ => return events.push(note_unreadable("unreadable codex line: ", line)),
        };
        let understood = match str_field(&v, "type") {
            Some("thread.started") => match str_field(&v, "thread_id") {
                Some(id) => {
                    // Codex does not say how it bills in its event stream.
                    events.push(Event::SessionStarted(SessionInfo {
                        id: id.to_owned(),
                        auth: "unknown".to_owned(),
                        model: None,
                    }));
                    true
                }
                None => false,
            },
            Some("turn.started") => {
                self.last_message.clear();
                true
            }
            Some("item.started") | Some("item.updated") | Some("item.completed") => {
                self.item(str_field(&v, "type").unwrap_or(""), v.get("item").unwrap_or(&Value::Null), events)
            }
            Some("turn.completed") => {
                if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
                    self.total = self.total.plus(usage_of(usage));
                    events.push(Event::Usage(self.total));
                }
                events.push(Event::TurnEnd(self.last_message.clone()));
                true
            }
            Some("turn.failed") => {
                let message = v
                    .get("error")
                    .and_then(|e| str_field(e, "message"))
                    .or(self.last_error.as_deref())
                    .unwrap_or("Codex reported a failed turn")
                    .to_owned();
                events.push(Event::failed(failure_kind(&message), message));
                true
            }
            Some("error") => {
                let message = str_field(&v, "message").unwrap_or("").to_owned();
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

    fn item(&mut self, phase: &str, item: &Value, events: &mut Vec<Event>) -> bool {
        let id = str_field(item, "id").unwrap_or("").to_owned();
        let started = phase == "item.started";
        let completed = phase == "item.completed";
        match str_field(item, "type") {
            Some("agent_message") => {
                if completed {
                    let text = str_field(item, "text").unwrap_or("").to_owned();
                    self.last_message = text.clone();
                    events.push(Event::Text(text));
                }
            }
            Some("reasoning") => {
                if completed {
                    events.push(Event::Thinking(str_field(item, "text").unwrap_or("").to_owned()));
                }
            }
            Some("mcp_tool_call") => {
                if started {
                    let server = str_field(item, "server").unwrap_or("");
                    let tool = str_field(item, "tool").unwrap_or("");
                    let name = if self.server.as_deref() == Some(server) || server.is_empty() {
                        tool.to_owned()
                    } else {
                        format!("{}/{}", server, tool)
                    };
                    let input = item.get("arguments").map(Value::to_string).unwrap_or_else(|| "{}".to_owned());
                    events.push(Event::ToolCall(ToolCallInfo { id, name, input }));
                } else if completed {
                    let error = item.get("error").and_then(|e| str_field(e, "message"));
                    let output = match error {
                        Some(message) => message.to_owned(),
                        None => mcp_result_text(item.get("result").unwrap_or(&Value::Null)),
                    };
                    let is_error = error.is_some() || str_field(item, "status") == Some("failed");
                    events.push(Event::ToolResult(ToolResultInfo { id, output, is_error }));
                }
            }
            Some("command_execution") => {
                if started {
                    let input = serde_json::json!({ "command": item.get("command").unwrap_or(&Value::Null) });
                    events.push(Event::ToolCall(ToolCallInfo {
                        id,
                        name: "command_execution".to_owned(),
                        input: input.to_string(),
                    }));
                } else if completed {
                    let exit = item.get("exit_code").and_then(Value::as_i64);
                    events.push(Event::ToolResult(ToolResultInfo {
                        id,
                        output: str_field(item, "aggregated_output").unwrap_or("").to_owned(),
                        is_error: exit.map(|c| c != 0).unwrap_or(false) || str_field(item, "status") == Some("failed"),
                    }));
                }
            }
            Some("file_change") | Some("web_search") => {
                // Reported once, complete: a call and its result together.
                if completed {
                    let name = str_field(item, "type").unwrap_or("").to_owned();
                    let mut input = item.clone();
                    if let Some(map) = input.as_object_mut() {
                        map.remove("id");
                        map.remove("type");
                        map.remove("status");
                    }
                    events.push(Event::ToolCall(ToolCallInfo { id: id.clone(), name, input: input.to_string() }));
                    events.push(Event::ToolResult(ToolResultInfo {
                        id,
                        output: str_field(item, "status").unwrap_or("completed").to_owned(),
                        is_error: str_field(item, "status") == Some("failed"),
                    }));
                }
            }
            // A plan update carries nothing for the runtime; an `error` item is a non-fatal
            // warning (e.g. unknown model metadata): fatal errors come as `error` / `turn.failed`.
            Some("todo_list") | Some("error") => {}
            _ => return false,
        }
        true
    }
}

/// Codex's usage folds cached prompt tokens into `input_tokens`; they move out into
/// `cache-read` / `cache-creation` so `input` is the uncached prompt alone. `output_tokens`
/// includes `reasoning_output_tokens`, which is reported as `thinking`.
pub fn usage_of(usage: &Value) -> Usage {
    let cache_read = u64_field(usage, "cached_input_tokens");
    let cache_creation = u64_field(usage, "cache_write_input_tokens");
    let input = u64_field(usage, "input_tokens")
        .map(|i| i.saturating_sub(cache_read.unwrap_or(0)).saturating_sub(cache_creation.unwrap_or(0)));
    Usage {
        input,
        output: u64_field(usage, "output_tokens"),
        cache_read,
        cache_creation,
        thinking: u64_field(usage, "reasoning_output_tokens"),
    }
}
