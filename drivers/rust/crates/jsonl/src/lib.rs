//! The `jsonl` driver: drives any program that speaks the small JSONL contract in this crate's
//! README. The runtime writes one `turn` line to the program's stdin and closes it; the program
//! answers with one JSON object per stdout line and ends the turn with `result` or `error`.

mod parse;

use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde_json::{json, Value};

pub use parse::{failure_kind, usage_split, JsonlParser};

murmur_driver_abi::export_driver!(JsonlDriver);

/// The binary when the manifest names no `inference.command`: the contract has no standard
/// program, so the manifest is expected to set one; this name documents the expectation.
pub const DEFAULT_BINARY: &str = "capsule-agent";

#[derive(Default)]
pub struct JsonlDriver {
    parser: JsonlParser,
}

const KNOWN_CONFIG: &[&str] = &["binary_args", "env"];

impl Driver for JsonlDriver {
    fn describe() -> Description {
        Description {
            harness: "jsonl".to_owned(),
            binary: DEFAULT_BINARY.to_owned(),
            version_args: vec!["--version".to_owned()],
            tested_versions: vec!["1".to_owned()],
            interrupt: InterruptMethod::SignalInt,
            required_env: Vec::new(),
            streams_text: true,
            reports_usage: true,
            login_check: LoginCheck::Unavailable(
                "a jsonl program signs in by its own means; the contract has no login check".to_owned(),
            ),
            harness_needs: HarnessNeeds::default(),
        }
    }

    fn launch(&mut self, request: &LaunchRequest) -> Result<LaunchPlan, String> {
        let config = config_object(&request.config)?;
        check_known_keys(&config, KNOWN_CONFIG)?;
        let mut turn = json!({
            "type": "turn",
            "task": request.task,
            "system": request.system_prompt,
            "session": {
                "id": request.session.id,
                "mode": match request.session.mode { SessionMode::New => "new", SessionMode::Resume => "resume" },
            },
            "model": request.model,
            "bridge": Value::Null,
        });
        if let Some(bridge) = &request.bridge {
            turn["bridge"] = json!({
                "server": bridge.server_name,
                "url": bridge.url,
                "token": bridge.bearer_token,
                "tools": bridge.tool_names,
            });
        }
        let mut stdin = turn.to_string().into_bytes();
        stdin.push(b'\n');
        Ok(LaunchPlan {
            args: config_string_list(&config, "binary_args")?,
            env_set: config_env(&config)?,
            files: Vec::new(),
            stdin: Some(stdin),
            keep_stdin_open: false,
            interrupt_stdin: None,
        })
    }

    fn parse(&mut self, lines: &[String]) -> Vec<Event> {
        // About one event per line: the batch fills it without regrowing.
        let mut events = Vec::with_capacity(lines.len());
        for line in lines {
            self.parser.parse_line(line, &mut events);
        }
        events
    }

    fn classify_exit(&mut self, exit: &ExitStatus) -> Event {
        classify_exit_default("the jsonl program", exit)
    }

    fn read_login(_output: &LoginOutput) -> LoginState {
        LoginState::Unknown("the jsonl driver has no login check".to_owned())
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod value_parse;

#[cfg(test)]
mod oracle_tests;

#[cfg(test)]
mod fast_tests;
