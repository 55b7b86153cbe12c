//! The `gemini` driver: drives Gemini CLI's headless mode with `--output-format stream-json`,
//! one process per turn. Flags, event mapping, usage mapping and config keys are documented in
//! this crate's README.

mod parse;

use murmur_driver_abi::util::*;
use murmur_driver_abi::*;
use serde_json::{json, Value};

pub use parse::GeminiParser;

murmur_driver_abi::export_driver!(GeminiDriver);

/// The runtime's system prompt, in `{files_dir}`; `GEMINI_SYSTEM_MD` points Gemini CLI at it.
pub const SYSTEM_FILE: &str = "system.md";
/// Settings layered over the user's (telemetry off, the bridge with its token), in `{files_dir}`;
/// `GEMINI_CLI_SYSTEM_SETTINGS_PATH` points Gemini CLI at it.
pub const SETTINGS_FILE: &str = "settings.json";

const KNOWN_CONFIG: &[&str] = &["approval_mode", "auth_type", "max_attempts", "telemetry", "env", "extra_args"];

/// The auth types a headless Gemini CLI accepts (`security.auth.selectedType`). Its `gateway`
/// type, which it picks whenever `GOOGLE_GEMINI_BASE_URL` is set, is refused headless ("Invalid
/// auth method selected"), so it is not offered.
pub const AUTH_TYPES: &[&str] = &["gemini-api-key", "oauth-personal", "vertex-ai", "compute-default-credentials"];

/// Gemini CLI's own default is 10 attempts per request with exponential backoff: against an API
/// that keeps answering 429 that is minutes with nothing on stdout. 3 attempts ride out a brief
/// limit (~5 s of backoff in 0.61.0) and end an exhausted quota as a `quota` failure.
pub const DEFAULT_MAX_ATTEMPTS: u64 = 3;
/// Gemini CLI caps `general.maxAttempts` at 10.
const MAX_ATTEMPTS_CAP: u64 = 10;

#[derive(Default)]
pub struct GeminiDriver {
    parser: GeminiParser,
}

impl Driver for GeminiDriver {
    fn describe() -> Description {
        Description {
            harness: "gemini".to_owned(),
            binary: "gemini".to_owned(),
            version_args: vec!["--version".to_owned()],
            tested_versions: vec!["0.61.0".to_owned()],
            interrupt: InterruptMethod::SignalInt,
            required_env: vec!["HOME".to_owned(), "PATH".to_owned()],
            streams_text: true,
            reports_usage: true,
            login_check: LoginCheck::Unavailable(
                "Gemini CLI has no command that reports sign-in without starting a session; sign in by running `gemini` once, or provide GEMINI_API_KEY".to_owned(),
            ),
            harness_needs: HarnessNeeds {
                paths: vec![PathNeed { path: "~/.gemini".to_owned(), access: PathAccess::ReadWrite }],
                hosts: vec![
                    "generativelanguage.googleapis.com:443".to_owned(),
                    "cloudcode-pa.googleapis.com:443".to_owned(),
                    "oauth2.googleapis.com:443".to_owned(),
                ],
            },
        }
    }

    fn launch(&mut self, request: &LaunchRequest) -> Result<LaunchPlan, String> {
        let plan = plan(request)?;
        self.parser = GeminiParser::for_bridge(request.bridge.as_ref());
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
        classify_exit(exit)
    }

    fn read_login(_output: &LoginOutput) -> LoginState {
        LoginState::Unknown("Gemini CLI has no login check command".to_owned())
    }
}

/// The launch plan for one turn; pure, so it is tested without a driver instance.
pub fn plan(request: &LaunchRequest) -> Result<LaunchPlan, String> {
    let config = config_object(&request.config)?;
    check_known_keys(&config, KNOWN_CONFIG)?;
    // Values are joined with `=` so a value that starts with `-` can never be read as a flag.
    let mut args = vec![
        format!("--prompt={}", request.task),
        "--output-format".to_owned(),
        "stream-json".to_owned(),
        "--skip-trust".to_owned(),
    ];
    if let Some(model) = &request.model {
        args.push(format!("--model={}", model));
    }
    if request.session.mode == SessionMode::Resume {
        args.push(format!("--resume={}", request.session.id));
    }
    if let Some(mode) = config_string(&config, "approval_mode")? {
        args.push(format!("--approval-mode={}", mode));
    }
    if let Some(bridge) = &request.bridge {
        args.push(format!("--allowed-mcp-server-names={}", bridge.server_name));
    }
    args.extend(config_string_list(&config, "extra_args")?);

    let env = config_env(&config)?;
    let mut settings = json!({});
    if let Some(auth) = auth_type(&config, &env)? {
        settings["security"] = json!({ "auth": { "selectedType": auth } });
    }
    let attempts = config_u64(&config, "max_attempts")?.unwrap_or(DEFAULT_MAX_ATTEMPTS);
    if attempts == 0 || attempts > MAX_ATTEMPTS_CAP {
        return Err(format!("config `max_attempts` must be 1 to {}", MAX_ATTEMPTS_CAP));
    }
    settings["general"] = json!({ "maxAttempts": attempts });
    let telemetry = config_bool(&config, "telemetry", false)?;
    if !telemetry {
        settings["telemetry"] = json!({ "enabled": false });
        settings["privacy"] = json!({ "usageStatisticsEnabled": false });
    }
    if let Some(bridge) = &request.bridge {
        let mut servers = serde_json::Map::new();
        // `trust` skips the confirmation a headless run cannot give; the bridge is the
        // capsule's own tools.
        servers.insert(
            bridge.server_name.clone(),
            json!({
                "httpUrl": bridge.url,
                "headers": { "Authorization": format!("Bearer {}", bridge.bearer_token) },
                "trust": true,
            }),
        );
        settings["mcpServers"] = Value::Object(servers);
    }
    let mut settings_text = serde_json::to_string_pretty(&settings).unwrap_or_default();
    settings_text.push('\n');

    let mut env_set = vec![("GEMINI_CLI_SYSTEM_SETTINGS_PATH".to_owned(), format!("{{files_dir}}/{}", SETTINGS_FILE))];
    let mut files = vec![DriverFile { name: SETTINGS_FILE.to_owned(), contents: settings_text }];
    // Only a capsule's own prompt replaces Gemini CLI's: an empty one would wipe the prompt that
    // teaches it its tools.
    if !request.system_prompt.trim().is_empty() {
        env_set.push(("GEMINI_SYSTEM_MD".to_owned(), format!("{{files_dir}}/{}", SYSTEM_FILE)));
        files.push(DriverFile { name: SYSTEM_FILE.to_owned(), contents: request.system_prompt.clone() });
    }
    if !telemetry {
        // Also as a variable: Gemini CLI skips a settings file below a folder others may write
        // (see the README), and telemetry must stay off even then.
        env_set.push(("GEMINI_TELEMETRY_ENABLED".to_owned(), "false".to_owned()));
    }
    env_set.extend(env);
    Ok(LaunchPlan {
        args,
        env_set,
        files,
        // Gemini CLI appends a piped stdin to the prompt: give it EOF at once.
        stdin: None,
        keep_stdin_open: false,
        interrupt_stdin: None,
    })
}

/// The auth type the settings select: `auth_type` from the config; else `gemini-api-key` when the
/// config's `env` sets `GOOGLE_GEMINI_BASE_URL` (Gemini CLI would pick `gateway`, which a headless
/// run refuses) or `GEMINI_API_KEY`; else none, and Gemini CLI uses the user's own settings (a
/// Google sign-in selects `oauth-personal` there). A variable granted from the host environment
/// is not visible to the driver: name the type with `auth_type` then.
pub fn auth_type(config: &serde_json::Map<String, Value>, env: &[(String, String)]) -> Result<Option<String>, String> {
    if let Some(auth) = config_string(config, "auth_type")? {
        if !AUTH_TYPES.contains(&auth.as_str()) {
            return Err(format!("config `auth_type` must be one of {}", AUTH_TYPES.join(", ")));
        }
        return Ok(Some(auth));
    }
    let sets = |name: &str| env.iter().any(|(k, _)| k == name);
    if sets("GOOGLE_GEMINI_BASE_URL") || sets("GEMINI_API_KEY") {
        return Ok(Some("gemini-api-key".to_owned()));
    }
    Ok(None)
}

/// Gemini CLI's exit codes: 41 authentication, 42 bad input, 52 config, 53 turn limit,
/// 55 untrusted folder, 130 canceled; on an API error the code is the HTTP status modulo 256
/// (401 → 145, 403 → 147, 429 → 173).
pub fn classify_exit(exit: &ExitStatus) -> Event {
    if exit.interrupted {
        return Event::failed(FailureKind::Canceled, "the turn was interrupted");
    }
    let detail = last_line(&exit.stderr_tail, 300);
    let (kind, what) = match exit.code {
        Some(41) => (FailureKind::Auth, "Gemini CLI could not authenticate"),
        Some(145) => (FailureKind::Auth, "the Gemini API refused the credentials (HTTP 401)"),
        Some(147) => (FailureKind::Auth, "the Gemini API refused access (HTTP 403)"),
        Some(173) => (FailureKind::Quota, "the Gemini API rate-limited the request (HTTP 429)"),
        Some(53) => (FailureKind::MaxTurns, "Gemini CLI stopped at its turn limit"),
        Some(130) => (FailureKind::Canceled, "Gemini CLI was canceled"),
        Some(55) => (FailureKind::HarnessError, "Gemini CLI refused the working directory as untrusted"),
        Some(42) => (FailureKind::HarnessError, "Gemini CLI refused its input"),
        Some(52) => (FailureKind::HarnessError, "Gemini CLI refused its configuration"),
        _ => return with_settings_hint(classify_exit_default("gemini", exit), exit),
    };
    with_settings_hint(Event::failed(kind, with_detail(what.to_owned(), &detail)), exit)
}

/// Gemini CLI ignores a system settings file when any folder above it is writable by group or
/// others (e.g. below `/tmp`) and says so on stderr; the driver's settings (auth type, attempts,
/// the bridge) are then missing, which the failure must say.
fn with_settings_hint(event: Event, exit: &ExitStatus) -> Event {
    if !exit.stderr_tail.contains("Skipping system settings file") {
        return event;
    }
    match event {
        Event::TurnFailed(mut f) => {
            f.message.push_str(SETTINGS_SKIPPED_HINT);
            Event::TurnFailed(f)
        }
        other => other,
    }
}

pub const SETTINGS_SKIPPED_HINT: &str = " (Gemini CLI skipped the driver's settings because a folder above the run directory is writable by others; set CAPSULE_WORK_ROOT to a private folder)";

#[cfg(test)]
mod tests;

#[cfg(test)]
mod value_parse;

#[cfg(test)]
mod oracle_tests;

#[cfg(test)]
mod fast_tests;
