//! The `claude-code` driver: drives Claude Code's `--print` mode with stream-json on both sides.
//! Flags, event mapping, usage mapping and config keys are documented in this crate's README.

mod parse;

use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde_json::{json, Value};

pub use parse::ClaudeParser;

murmur_driver_abi::export_driver!(ClaudeCodeDriver);

/// The file the bridge is described in, inside `{files_dir}`: the bearer token lives only here.
pub const MCP_CONFIG_FILE: &str = "mcp-config.json";

/// The interrupt request Claude Code answers with a `control_response` and an
/// `error_during_execution` / `aborted_streaming` result, keeping the process alive.
pub const INTERRUPT_LINE: &str =
    "{\"type\":\"control_request\",\"request_id\":\"capsule-interrupt\",\"request\":{\"subtype\":\"interrupt\"}}\n";

const KNOWN_CONFIG: &[&str] =
    &["permission_mode", "max_retries", "max_turns", "is_sandbox", "telemetry", "env", "extra_args"];

/// Environment that switches off Claude Code's telemetry, error reporting, update checks and other
/// non-essential traffic unless `telemetry: true`: a capsule's network grant is for the API only.
pub const QUIET_ENV: &[(&str, &str)] = &[
    ("DISABLE_TELEMETRY", "1"),
    ("DISABLE_ERROR_REPORTING", "1"),
    ("DISABLE_AUTOUPDATER", "1"),
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
];

#[derive(Default)]
pub struct ClaudeCodeDriver {
    parser: ClaudeParser,
}

impl Driver for ClaudeCodeDriver {
    fn describe() -> Description {
        Description {
            harness: "claude-code".to_owned(),
            binary: "claude".to_owned(),
            version_args: vec!["--version".to_owned()],
            tested_versions: vec!["2.1.328".to_owned()],
            interrupt: InterruptMethod::StdinMessage,
            required_env: vec!["HOME".to_owned(), "PATH".to_owned()],
            streams_text: true,
            reports_usage: true,
            login_check: LoginCheck::Command(vec!["auth".to_owned(), "status".to_owned(), "--json".to_owned()]),
            harness_needs: HarnessNeeds {
                paths: vec![PathNeed { path: "~/.claude".to_owned(), access: PathAccess::ReadWrite }],
                hosts: vec!["api.anthropic.com:443".to_owned()],
            },
        }
    }

    fn launch(&mut self, request: &LaunchRequest) -> Result<LaunchPlan, String> {
        let plan = plan(request)?;
        self.parser = ClaudeParser::for_bridge(request.bridge.as_ref());
        Ok(plan)
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
        let tail = exit.stderr_tail.to_ascii_lowercase();
        if !exit.interrupted
            && exit.signal.is_none()
            && (tail.contains("invalid api key") || tail.contains("/login") || tail.contains("not logged in"))
        {
            return Event::failed(
                FailureKind::Auth,
                with_detail("Claude Code could not authenticate".to_owned(), &last_line(&exit.stderr_tail, 300)),
            );
        }
        classify_exit_default("claude", exit)
    }

    fn read_login(output: &LoginOutput) -> LoginState {
        read_login(output)
    }
}

/// Claude Code names an MCP tool `mcp__<server>__<tool>`, with the server name reduced to
/// `[A-Za-z0-9_-]` (anything else becomes `_`).
pub fn tool_prefix(server_name: &str) -> String {
    let server: String =
        server_name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    format!("mcp__{}__", server)
}

/// The launch plan for one turn; pure, so it is tested without a driver instance.
pub fn plan(request: &LaunchRequest) -> Result<LaunchPlan, String> {
    let config = config_object(&request.config)?;
    check_known_keys(&config, KNOWN_CONFIG)?;
    if request.session.id.is_empty() {
        return Err("the session id is empty".to_owned());
    }
    let mut args: Vec<String> = [
        "--print",
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
        "--include-partial-messages",
        "--setting-sources",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Values are joined with `=` so a value that starts with `-` can never be read as a flag.
    if let Some(model) = &request.model {
        args.push(format!("--model={}", model));
    }
    args.push(match request.session.mode {
        SessionMode::New => format!("--session-id={}", request.session.id),
        SessionMode::Resume => format!("--resume={}", request.session.id),
    });
    args.push(format!("--system-prompt={}", request.system_prompt));
    let permission_mode = config_string(&config, "permission_mode")?.unwrap_or_else(|| "bypassPermissions".to_owned());
    args.push(format!("--permission-mode={}", permission_mode));
    if let Some(max_turns) = config_u64(&config, "max_turns")? {
        args.push(format!("--max-turns={}", max_turns));
    }
    let mut files = Vec::new();
    match &request.bridge {
        Some(bridge) => {
            let prefix = tool_prefix(&bridge.server_name);
            let mut tools = Vec::new();
            for tool in &bridge.tool_names {
                if tool.is_empty() || tool.contains(',') || tool.chars().any(char::is_whitespace) {
                    return Err(format!("bridge tool name `{}` cannot be passed to --tools", tool));
                }
                tools.push(format!("{}{}", prefix, tool));
            }
            files.push(DriverFile { name: MCP_CONFIG_FILE.to_owned(), contents: mcp_config(bridge) });
            args.push(format!("--mcp-config={{files_dir}}/{}", MCP_CONFIG_FILE));
            args.push("--strict-mcp-config".to_owned());
            args.push("--tools".to_owned());
            args.push(tools.join(","));
        }
        None => {
            // No bridge: the harness gets no tools at all, not even its built-in ones.
            args.push("--tools".to_owned());
            args.push(String::new());
        }
    }
    args.extend(config_string_list(&config, "extra_args")?);

    let mut env_set = Vec::new();
    if config_bool(&config, "is_sandbox", true)? {
        // As root, bypassPermissions is refused unless IS_SANDBOX is exactly `1`; the capsule is
        // the sandbox.
        env_set.push(("IS_SANDBOX".to_owned(), "1".to_owned()));
    }
    if let Some(retries) = config_u64(&config, "max_retries")? {
        env_set.push(("CLAUDE_CODE_MAX_RETRIES".to_owned(), retries.to_string()));
    }
    if !config_bool(&config, "telemetry", false)? {
        env_set.extend(QUIET_ENV.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    }
    env_set.extend(config_env(&config)?);

    Ok(LaunchPlan {
        args,
        env_set,
        files,
        stdin: Some(task_line(&request.task).into_bytes()),
        keep_stdin_open: true,
        interrupt_stdin: Some(INTERRUPT_LINE.as_bytes().to_vec()),
    })
}

/// The `--mcp-config` file: the bridge as an HTTP MCP server, with its bearer token.
pub fn mcp_config(bridge: &Bridge) -> String {
    let mut servers = serde_json::Map::new();
    servers.insert(
        bridge.server_name.clone(),
        json!({
            "type": "http",
            "url": bridge.url,
            "headers": { "Authorization": format!("Bearer {}", bridge.bearer_token) },
        }),
    );
    let mut text = serde_json::to_string_pretty(&json!({ "mcpServers": Value::Object(servers) })).unwrap_or_default();
    text.push('\n');
    text
}

/// The task as one stream-json user line. Stdin stays open afterwards: closing it does not stop
/// a turn, and the interrupt request needs it.
pub fn task_line(task: &str) -> String {
    let mut line = json!({
        "type": "user",
        "message": { "role": "user", "content": [ { "type": "text", "text": task } ] },
    })
    .to_string();
    line.push('\n');
    line
}

const SIGN_IN: &str = "Claude Code is not signed in for this user; sign in with `claude auth login` (or run `claude` and use /login), or provide an API key";

/// `claude auth status --json` prints pretty JSON with `loggedIn`; it exits 1 when logged out.
pub fn read_login(output: &LoginOutput) -> LoginState {
    let parsed: Option<Value> = serde_json::from_str(output.stdout.trim()).ok();
    match parsed.as_ref().and_then(|v| v.get("loggedIn")).and_then(Value::as_bool) {
        Some(true) => LoginState::LoggedIn,
        Some(false) => LoginState::LoggedOut(SIGN_IN.to_owned()),
        None => match output.exit_code {
            Some(1) => LoginState::LoggedOut(SIGN_IN.to_owned()),
            Some(code) => LoginState::Unknown(format!(
                "`claude auth status --json` printed no loggedIn field (exit code {})",
                code
            )),
            None => LoginState::Unknown("`claude auth status --json` was ended by a signal".to_owned()),
        },
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
