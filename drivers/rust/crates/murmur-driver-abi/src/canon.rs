//! Hand-written canonical-ABI lifting and lowering for exactly the types the five exports of
//! `murmur:driver/process@0.6.0` pass (wit-bindgen is not packaged for the offline toolchain).
//!
//! Memory ownership. Everything the host allocates through `cabi_realloc` before a call (the
//! parameters) is tracked as *inbound* and freed as soon as the export has copied it into owned
//! Rust values, whatever way the host carved its allocations. Everything the export allocates
//! for its result is tracked as *outbound* and freed by the `cabi_post_*` function; it is also
//! freed at the start of the next export call, so a host that never calls post-return leaks
//! nothing across calls.
//!
//! Layouts (offsets in bytes, all little-endian), derived from the canonical ABI:
//! - string, list: `{ptr: u32 @0, len: u32 @4}`, size 8, align 4.
//! - option<string>/option<list>: disc u8 @0, payload @4, size 12; option<s32> 8;
//!   option<u64>/option<f64>: disc @0, payload @8, size 16, align 8.
//! - event: disc u8 @0, payload @8 (usage and quota windows need align 8), size 88, align 8.
//! - quota-window: name @0, used @8, resets-at @24, window-minutes @40, state @56, size 64.
//! - description: size 76; launch-request: size 100; result<launch-plan,string>: size 56;
//!   login-state: size 12. Each lowering function names its field offsets.

use crate::types::*;
use std::alloc::{alloc_zeroed, dealloc, Layout};

static mut INBOUND: Vec<(usize, Layout)> = Vec::new();
static mut OUTBOUND: Vec<(usize, Layout)> = Vec::new();

fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

unsafe fn tracked_alloc(list: &mut Vec<(usize, Layout)>, size: usize, align: usize) -> *mut u8 {
    if size == 0 {
        // A zero-length string or list needs an aligned, never-dereferenced pointer.
        return align.max(1) as *mut u8;
    }
    let layout = match Layout::from_size_align(size, align.max(1)) {
        Ok(layout) => layout,
        Err(_) => trap(),
    };
    let ptr = alloc_zeroed(layout);
    if ptr.is_null() {
        trap();
    }
    list.push((ptr as usize, layout));
    ptr
}

unsafe fn free_all(list: &mut Vec<(usize, Layout)>) {
    for (ptr, layout) in list.drain(..) {
        dealloc(ptr as *mut u8, layout);
    }
}

/// `cabi_realloc`: the host allocates parameter memory here. A grow copies into a fresh block;
/// the old one stays tracked and is freed with the rest after lifting.
pub unsafe fn realloc(old_ptr: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
    let ptr = tracked_alloc(&mut INBOUND, new_size, align);
    if !old_ptr.is_null() && old_size > 0 && new_size > 0 {
        core::ptr::copy_nonoverlapping(old_ptr, ptr, old_size.min(new_size));
    }
    ptr
}

pub unsafe fn begin_call() {
    free_all(&mut OUTBOUND);
}

pub unsafe fn end_call() {
    free_all(&mut OUTBOUND);
}

unsafe fn done_lifting() {
    free_all(&mut INBOUND);
}

// ---- lifting (host → driver) ----

unsafe fn rd_u8(base: *const u8, off: usize) -> u8 {
    base.add(off).read()
}

unsafe fn rd_u32(base: *const u8, off: usize) -> u32 {
    (base.add(off) as *const u32).read_unaligned()
}

unsafe fn lift_string(ptr: *const u8, len: usize) -> String {
    if len == 0 {
        return String::new();
    }
    let bytes = core::slice::from_raw_parts(ptr, len);
    match core::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

unsafe fn rd_string(base: *const u8, off: usize) -> String {
    lift_string(rd_u32(base, off) as usize as *const u8, rd_u32(base, off + 4) as usize)
}

unsafe fn rd_opt_string(base: *const u8, off: usize) -> Option<String> {
    match rd_u8(base, off) {
        0 => None,
        1 => Some(rd_string(base, off + 4)),
        _ => trap(),
    }
}

unsafe fn rd_string_list(base: *const u8, off: usize) -> Vec<String> {
    lift_string_list(rd_u32(base, off) as usize as *const u8, rd_u32(base, off + 4) as usize)
}

unsafe fn lift_string_list(ptr: *const u8, count: usize) -> Vec<String> {
    (0..count).map(|i| rd_string(ptr, i * 8)).collect()
}

fn lift_bool(v: i32) -> bool {
    match v {
        0 => false,
        1 => true,
        _ => trap(),
    }
}

fn lift_opt_s32(set: i32, value: i32) -> Option<i32> {
    if lift_bool(set) {
        Some(value)
    } else {
        None
    }
}

pub unsafe fn lift_launch_request(p: *mut u8) -> LaunchRequest {
    let p = p as *const u8;
    let bridge = match rd_u8(p, 32) {
        0 => None,
        1 => Some(Bridge {
            server_name: rd_string(p, 36),
            url: rd_string(p, 44),
            bearer_token: rd_string(p, 52),
            tool_names: rd_string_list(p, 60),
        }),
        _ => trap(),
    };
    let mode = match rd_u8(p, 76) {
        0 => SessionMode::New,
        1 => SessionMode::Resume,
        _ => trap(),
    };
    let request = LaunchRequest {
        model: rd_opt_string(p, 0),
        system_prompt: rd_string(p, 12),
        config: rd_opt_string(p, 20),
        bridge,
        session: Session { id: rd_string(p, 68), mode },
        harness_version: rd_opt_string(p, 80),
        task: rd_string(p, 92),
    };
    done_lifting();
    request
}

pub unsafe fn lift_lines(ptr: *mut u8, count: usize) -> Vec<String> {
    let lines = lift_string_list(ptr as *const u8, count);
    done_lifting();
    lines
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn lift_exit_status(
    code_set: i32,
    code: i32,
    signal_set: i32,
    signal: i32,
    tail_ptr: *mut u8,
    tail_len: usize,
    interrupted: i32,
    saw_terminal: i32,
) -> ExitStatus {
    let exit = ExitStatus {
        code: lift_opt_s32(code_set, code),
        signal: lift_opt_s32(signal_set, signal),
        stderr_tail: lift_string(tail_ptr as *const u8, tail_len),
        interrupted: lift_bool(interrupted),
        saw_terminal: lift_bool(saw_terminal),
    };
    done_lifting();
    exit
}

pub unsafe fn lift_login_output(
    code_set: i32,
    code: i32,
    stdout_ptr: *mut u8,
    stdout_len: usize,
    stderr_ptr: *mut u8,
    stderr_len: usize,
) -> LoginOutput {
    let output = LoginOutput {
        exit_code: lift_opt_s32(code_set, code),
        stdout: lift_string(stdout_ptr as *const u8, stdout_len),
        stderr: lift_string(stderr_ptr as *const u8, stderr_len),
    };
    done_lifting();
    output
}

// ---- lowering (driver → host) ----

unsafe fn out(size: usize, align: usize) -> *mut u8 {
    tracked_alloc(&mut OUTBOUND, size, align)
}

unsafe fn wr_u8(base: *mut u8, off: usize, v: u8) {
    base.add(off).write(v)
}

unsafe fn wr_u32(base: *mut u8, off: usize, v: u32) {
    (base.add(off) as *mut u32).write_unaligned(v)
}

unsafe fn wr_u64(base: *mut u8, off: usize, v: u64) {
    (base.add(off) as *mut u64).write_unaligned(v)
}

unsafe fn wr_bytes(base: *mut u8, off: usize, bytes: &[u8]) {
    let ptr = out(bytes.len(), 1);
    if !bytes.is_empty() {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len());
    }
    wr_u32(base, off, ptr as u32);
    wr_u32(base, off + 4, bytes.len() as u32);
}

unsafe fn wr_string(base: *mut u8, off: usize, s: &str) {
    wr_bytes(base, off, s.as_bytes())
}

unsafe fn wr_opt_string(base: *mut u8, off: usize, s: &Option<String>) {
    if let Some(s) = s {
        wr_u8(base, off, 1);
        wr_string(base, off + 4, s);
    }
}

unsafe fn wr_opt_bytes(base: *mut u8, off: usize, b: &Option<Vec<u8>>) {
    if let Some(b) = b {
        wr_u8(base, off, 1);
        wr_bytes(base, off + 4, b);
    }
}

unsafe fn wr_opt_u64(base: *mut u8, off: usize, v: Option<u64>) {
    if let Some(v) = v {
        wr_u8(base, off, 1);
        wr_u64(base, off + 8, v);
    }
}

/// Writes a list header at `base+off` whose elements of `size`/`align` are written by `each`.
unsafe fn wr_list<T>(
    base: *mut u8,
    off: usize,
    items: &[T],
    size: usize,
    align: usize,
    each: impl Fn(*mut u8, &T),
) {
    let ptr = out(items.len() * size, align);
    for (i, item) in items.iter().enumerate() {
        each(ptr.add(i * size), item);
    }
    wr_u32(base, off, ptr as u32);
    wr_u32(base, off + 4, items.len() as u32);
}

unsafe fn wr_string_list(base: *mut u8, off: usize, items: &[String]) {
    wr_list(base, off, items, 8, 4, |p, s| wr_string(p, 0, s));
}

pub unsafe fn lower_description(d: &Description) -> *mut u8 {
    done_lifting();
    let p = out(76, 4);
    wr_string(p, 0, &d.harness);
    wr_string(p, 8, &d.binary);
    wr_string_list(p, 16, &d.version_args);
    wr_string_list(p, 24, &d.tested_versions);
    wr_u8(
        p,
        32,
        match d.interrupt {
            InterruptMethod::StdinMessage => 0,
            InterruptMethod::SignalInt => 1,
            InterruptMethod::Unsupported => 2,
        },
    );
    wr_string_list(p, 36, &d.required_env);
    wr_u8(p, 44, d.streams_text as u8);
    wr_u8(p, 45, d.reports_usage as u8);
    match &d.login_check {
        LoginCheck::Command(args) => {
            wr_u8(p, 48, 0);
            wr_string_list(p, 52, args);
        }
        LoginCheck::Unavailable(reason) => {
            wr_u8(p, 48, 1);
            wr_string(p, 52, reason);
        }
    }
    wr_list(p, 60, &d.harness_needs.paths, 12, 4, |e, need| {
        wr_string(e, 0, &need.path);
        wr_u8(
            e,
            8,
            match need.access {
                PathAccess::Read => 0,
                PathAccess::ReadWrite => 1,
            },
        );
    });
    wr_string_list(p, 68, &d.harness_needs.hosts);
    p
}

pub unsafe fn lower_launch_result(r: &Result<LaunchPlan, String>) -> *mut u8 {
    let p = out(56, 4);
    match r {
        Ok(plan) => {
            wr_u8(p, 0, 0);
            wr_string_list(p, 4, &plan.args);
            wr_list(p, 12, &plan.env_set, 16, 4, |e, (name, value)| {
                wr_string(e, 0, name);
                wr_string(e, 8, value);
            });
            wr_list(p, 20, &plan.files, 16, 4, |e, file| {
                wr_string(e, 0, &file.name);
                wr_string(e, 8, &file.contents);
            });
            wr_opt_bytes(p, 28, &plan.stdin);
            wr_u8(p, 40, plan.keep_stdin_open as u8);
            wr_opt_bytes(p, 44, &plan.interrupt_stdin);
        }
        Err(message) => {
            wr_u8(p, 0, 1);
            wr_string(p, 4, message);
        }
    }
    p
}

unsafe fn wr_event(p: *mut u8, e: &Event) {
    const PAYLOAD: usize = 8;
    let q = p.add(PAYLOAD);
    match e {
        Event::SessionStarted(info) => {
            wr_u8(p, 0, 0);
            wr_string(q, 0, &info.id);
            wr_string(q, 8, &info.auth);
            wr_opt_string(q, 16, &info.model);
        }
        Event::TextDelta(s) => {
            wr_u8(p, 0, 1);
            wr_string(q, 0, s);
        }
        Event::Text(s) => {
            wr_u8(p, 0, 2);
            wr_string(q, 0, s);
        }
        Event::ThinkingDelta(s) => {
            wr_u8(p, 0, 3);
            wr_string(q, 0, s);
        }
        Event::Thinking(s) => {
            wr_u8(p, 0, 4);
            wr_string(q, 0, s);
        }
        Event::ToolCall(call) => {
            wr_u8(p, 0, 5);
            wr_string(q, 0, &call.id);
            wr_string(q, 8, &call.name);
            wr_string(q, 16, &call.input);
        }
        Event::ToolResult(result) => {
            wr_u8(p, 0, 6);
            wr_string(q, 0, &result.id);
            wr_string(q, 8, &result.output);
            wr_u8(q, 16, result.is_error as u8);
        }
        Event::Retry(retry) => {
            wr_u8(p, 0, 7);
            wr_u32(q, 0, retry.attempt);
            wr_string(q, 4, &retry.reason);
        }
        Event::Usage(u) => {
            wr_u8(p, 0, 8);
            wr_opt_u64(q, 0, u.input);
            wr_opt_u64(q, 16, u.output);
            wr_opt_u64(q, 32, u.cache_read);
            wr_opt_u64(q, 48, u.cache_creation);
            wr_opt_u64(q, 64, u.thinking);
        }
        Event::TurnEnd(s) => {
            wr_u8(p, 0, 9);
            wr_string(q, 0, s);
        }
        Event::TurnFailed(f) => {
            wr_u8(p, 0, 10);
            wr_u8(
                q,
                0,
                match f.kind {
                    FailureKind::Auth => 0,
                    FailureKind::Quota => 1,
                    FailureKind::MaxTurns => 2,
                    FailureKind::Canceled => 3,
                    FailureKind::HarnessError => 4,
                    FailureKind::Other => 5,
                },
            );
            wr_string(q, 4, &f.message);
        }
        Event::Note(s) => {
            wr_u8(p, 0, 11);
            wr_string(q, 0, s);
        }
        Event::ToolCallStarted(start) => {
            wr_u8(p, 0, 12);
            wr_string(q, 0, &start.id);
            wr_string(q, 8, &start.name);
        }
        Event::ToolCallProgress(progress) => {
            wr_u8(p, 0, 13);
            wr_string(q, 0, &progress.id);
            wr_u64(q, 8, progress.input_bytes);
        }
        Event::Quota(windows) => {
            wr_u8(p, 0, 14);
            wr_list(q, 0, windows, 64, 8, |w, window| {
                wr_string(w, 0, &window.name);
                if let Some(used) = window.used {
                    wr_u8(w, 8, 1);
                    wr_u64(w, 16, used.to_bits());
                }
                wr_opt_u64(w, 24, window.resets_at);
                wr_opt_u64(w, 40, window.window_minutes);
                if let Some(state) = window.state {
                    wr_u8(w, 56, 1);
                    wr_u8(
                        w,
                        57,
                        match state {
                            QuotaState::Ok => 0,
                            QuotaState::Warning => 1,
                            QuotaState::Exhausted => 2,
                        },
                    );
                }
            });
        }
        Event::SuggestedPrompt(s) => {
            wr_u8(p, 0, 15);
            wr_string(q, 0, s);
        }
    }
}

pub unsafe fn lower_event_list(events: &[Event]) -> *mut u8 {
    let ret = out(8, 4);
    wr_list(ret, 0, events, 88, 8, |p, e| wr_event(p, e));
    ret
}

pub unsafe fn lower_event(e: &Event) -> *mut u8 {
    let p = out(88, 8);
    wr_event(p, e);
    p
}

pub unsafe fn lower_login_state(s: &LoginState) -> *mut u8 {
    let p = out(12, 4);
    match s {
        LoginState::LoggedIn => wr_u8(p, 0, 0),
        LoginState::LoggedOut(reason) => {
            wr_u8(p, 0, 1);
            wr_string(p, 4, reason);
        }
        LoginState::Unknown(reason) => {
            wr_u8(p, 0, 2);
            wr_string(p, 4, reason);
        }
    }
    p
}
