//! The `codex` driver: drives `codex exec --json`, one process per turn, the task on stdin.
//! Flags, event mapping, usage mapping and config keys are documented in this crate's README.

mod parse;

use murmur_driver_abi::util::*;
use murmur_driver_abi::*;

pub use parse::CodexParser;

murmur_driver_abi::export_driver!(CodexDriver);

/// The variable the bridge's bearer token is handed over in; Codex reads it through
/// `mcp_servers.<name>.bearer_token_env_var`, so the token is never in argv.
pub const TOKEN_ENV: &str = "CAPSULE_BRIDGE_TOKEN";

const KNOWN_CONFIG: &[&str] = &["sandbox", "skip_git_repo_check", "telemetry", "env", "extra_args"];
const SANDBOXES: &[&str] = &["read-only", "workspace-write", "danger-full-access"];

#[derive(Default)]
pub struct CodexDriver {
    parser: CodexParser,
}

impl Driver for CodexDriver {
    fn describe() -> Description {
        Description {
            harness: "codex".to_owned(),
            binary: "codex".to_owned(),
            version_args: vec!["--version".to_owned()],
            tested_versions: vec!["0.169.0".to_owned()],
            interrupt: InterruptMethod::SignalInt,
            required_env: vec!["HOME".to_owned(), "PATH".to_owned()],
            streams_text: false,
            reports_usage: true,
            login_check: LoginCheck::Command(vec!["login".to_owned(), "status".to_owned()]),
            harness_needs: HarnessNeeds {
                paths: vec![PathNeed { path: "~/.codex".to_owned(), access: PathAccess::ReadWrite }],
                hosts: vec!["api.openai.com:443".to_owned(), "chatgpt.com:443".to_owned()],
            },
        }
    }

    fn launch(&mut self, request: &LaunchRequest) -> Result<LaunchPlan, String> {
        let plan = plan(request)?;
        self.parser = CodexParser::for_bridge(request.bridge.as_ref());
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
        if !exit.interrupted && exit.signal.is_none() {
            if let Some(message) = self.parser.last_error() {
                return Event::failed(parse::failure_kind(message), message.to_owned());
            }
        }
        classify_exit_default("codex", exit)
    }

    fn read_login(output: &LoginOutput) -> LoginState {
        read_login(output)
    }
}

/// A TOML basic string, for `--config key=value` overrides (Codex parses the value as TOML).
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn bare_key(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The launch plan for one turn; pure, so it is tested without a driver instance.
pub fn plan(request: &LaunchRequest) -> Result<LaunchPlan, String> {
    let config = config_object(&request.config)?;
    check_known_keys(&config, KNOWN_CONFIG)?;
    let sandbox = config_string(&config, "sandbox")?.unwrap_or_else(|| "workspace-write".to_owned());
    if !SANDBOXES.contains(&sandbox.as_str()) {
        return Err(format!("config `sandbox` must be one of {}", SANDBOXES.join(", ")));
    }
    let mut args = vec!["exec".to_owned(), "--json".to_owned()];
    if config_bool(&config, "skip_git_repo_check", true)? {
        args.push("--skip-git-repo-check".to_owned());
    }
    // Values are joined with `=` so a value that starts with `-` can never be read as a flag.
    if let Some(model) = &request.model {
        args.push(format!("--model={}", model));
    }
    args.push(format!("--sandbox={}", sandbox));
    // Codex reports usage analytics unless told not to (seen as `analytics_enabled` in the
    // metadata header of every model request).
    if !config_bool(&config, "telemetry", false)? {
        args.push("--config=analytics.enabled=false".to_owned());
    }
    args.push(format!("--config=developer_instructions={}", toml_string(&request.system_prompt)));
    let mut env_set = Vec::new();
    if let Some(bridge) = &request.bridge {
        if !bare_key(&bridge.server_name) {
            return Err(format!("bridge server name `{}` must be [A-Za-z0-9_-] for Codex's config", bridge.server_name));
        }
        let key = format!("mcp_servers.{}", bridge.server_name);
        args.push(format!("--config={}.url={}", key, toml_string(&bridge.url)));
        args.push(format!("--config={}.bearer_token_env_var={}", key, toml_string(TOKEN_ENV)));
        // Without it Codex starts MCP servers in the background and its first model request may
        // go out before the bridge's tools are listed (seen with 0.169.0): a required server is
        // initialized before the turn starts, and failing to is a startup error, not a turn
        // without tools.
        args.push(format!("--config={}.required=true", key));
        // The bridge's tools are the capsule's own grants, checked by the runtime; an exec run
        // cannot answer an approval ("MCP tool call requires approval, but approval policy is
        // never"), so they are approved here, as Gemini's `trust` does.
        args.push(format!("--config={}.default_tools_approval_mode=\"approve\"", key));
        env_set.push((TOKEN_ENV.to_owned(), bridge.bearer_token.clone()));
    }
    args.extend(config_string_list(&config, "extra_args")?);
    env_set.extend(config_env(&config)?);
    if request.session.mode == SessionMode::Resume {
        if request.session.id.is_empty() || request.session.id.starts_with('-') {
            return Err(format!("session id `{}` cannot be resumed", request.session.id));
        }
        args.push("resume".to_owned());
        args.push(request.session.id.clone());
    }
    // `-`: read the task from stdin, which is closed after it (Codex reads a piped stdin to EOF).
    args.push("-".to_owned());
    Ok(LaunchPlan {
        args,
        env_set,
        files: Vec::new(),
        stdin: Some(request.task.as_bytes().to_vec()),
        keep_stdin_open: false,
        interrupt_stdin: None,
    })
}

/// `codex login status` prints "Not logged in" and exits 1 when no login is saved (an API key in
/// the environment does not count); it exits 0 when logged in.
pub fn read_login(output: &LoginOutput) -> LoginState {
    let text = format!("{}\n{}", output.stdout, output.stderr);
    let lower = text.to_ascii_lowercase();
    if lower.contains("not logged in") {
        return LoginState::LoggedOut(
            "Codex is not signed in for this user; run `codex login` (or `codex login --with-api-key`)".to_owned(),
        );
    }
    match output.exit_code {
        Some(0) if lower.contains("logged in") => LoginState::LoggedIn,
        // Its output is not echoed: a reason must carry no credential, and this one is unknown.
        Some(code) => LoginState::Unknown(format!("`codex login status` exited with code {} and did not say", code)),
        None => LoginState::Unknown("`codex login status` was ended by a signal".to_owned()),
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
