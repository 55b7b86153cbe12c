//! The `murmur:driver/process@0.6.0` contract types, one Rust type per WIT type, in WIT order.
//! Field names follow the WIT (snake_case for kebab-case); `Option` is WIT `option`, and `None`
//! keeps its WIT meaning ("not reported"), never zero.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterruptMethod {
    StdinMessage,
    SignalInt,
    Unsupported,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathAccess {
    Read,
    ReadWrite,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathNeed {
    pub path: String,
    pub access: PathAccess,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarnessNeeds {
    pub paths: Vec<PathNeed>,
    pub hosts: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    pub harness: String,
    pub binary: String,
    pub version_args: Vec<String>,
    pub tested_versions: Vec<String>,
    pub interrupt: InterruptMethod,
    pub required_env: Vec<String>,
    pub streams_text: bool,
    pub reports_usage: bool,
    pub login_check: LoginCheck,
    pub harness_needs: HarnessNeeds,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginCheck {
    Command(Vec<String>),
    Unavailable(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoginOutput {
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginState {
    LoggedIn,
    LoggedOut(String),
    Unknown(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bridge {
    pub server_name: String,
    pub url: String,
    pub bearer_token: String,
    pub tool_names: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionMode {
    New,
    Resume,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    pub mode: SessionMode,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRequest {
    pub model: Option<String>,
    pub system_prompt: String,
    pub config: Option<String>,
    pub bridge: Option<Bridge>,
    pub session: Session,
    pub harness_version: Option<String>,
    pub task: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverFile {
    pub name: String,
    pub contents: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchPlan {
    pub args: Vec<String>,
    pub env_set: Vec<(String, String)>,
    pub files: Vec<DriverFile>,
    pub stdin: Option<Vec<u8>>,
    pub keep_stdin_open: bool,
    pub interrupt_stdin: Option<Vec<u8>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub auth: String,
    pub model: Option<String>,
}

/// Cumulative for the harness run; `None` = not reported, never zero. `cache_read` and
/// `cache_creation` sit beside `input`; `thinking` is a subset of `output`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_creation: Option<u64>,
    pub thinking: Option<u64>,
}

impl Usage {
    /// Member-wise sum that keeps "not reported" apart from zero: a member is reported when either
    /// side reported it.
    pub fn plus(self, other: Usage) -> Usage {
        fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            }
        }
        Usage {
            input: add(self.input, other.input),
            output: add(self.output, other.output),
            cache_read: add(self.cache_read, other.cache_read),
            cache_creation: add(self.cache_creation, other.cache_creation),
            thinking: add(self.thinking, other.thinking),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallInfo {
    pub id: String,
    pub name: String,
    pub input: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallStart {
    pub id: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallProgress {
    pub id: String,
    pub input_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResultInfo {
    pub id: String,
    pub output: String,
    pub is_error: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryInfo {
    pub attempt: u32,
    pub reason: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    Auth,
    Quota,
    MaxTurns,
    Canceled,
    HarnessError,
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnFailure {
    pub kind: FailureKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuotaState {
    Ok,
    Warning,
    Exhausted,
}

#[derive(Clone, Debug, PartialEq)]
pub struct QuotaWindow {
    pub name: String,
    pub used: Option<f64>,
    pub resets_at: Option<u64>,
    pub window_minutes: Option<u64>,
    pub state: Option<QuotaState>,
}

/// One thing the harness did. Variant order is the WIT case order (the canonical-ABI
/// discriminant).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    SessionStarted(SessionInfo),
    TextDelta(String),
    Text(String),
    ThinkingDelta(String),
    Thinking(String),
    ToolCall(ToolCallInfo),
    ToolResult(ToolResultInfo),
    Retry(RetryInfo),
    Usage(Usage),
    TurnEnd(String),
    TurnFailed(TurnFailure),
    Note(String),
    ToolCallStarted(ToolCallStart),
    ToolCallProgress(ToolCallProgress),
    Quota(Vec<QuotaWindow>),
    SuggestedPrompt(String),
}

impl Event {
    #[inline]
    pub fn is_terminal(&self) -> bool {
        matches!(self, Event::TurnEnd(_) | Event::TurnFailed(_))
    }

    pub fn failed(kind: FailureKind, message: impl Into<String>) -> Event {
        Event::TurnFailed(TurnFailure { kind, message: message.into() })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitStatus {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stderr_tail: String,
    pub interrupted: bool,
    pub saw_terminal: bool,
}
