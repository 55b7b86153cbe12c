//! Lowering: the driver's results into memory the host lifts, freed by post-return.

use super::{layout, tracked_alloc, OUTBOUND};
use crate::types::*;

unsafe fn out(size: usize, align: usize) -> *mut u8 {
    tracked_alloc(&mut OUTBOUND, size, align, true)
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
    let ptr = tracked_alloc(&mut OUTBOUND, bytes.len(), 1, false);
    if !bytes.is_empty() {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len());
    }
    wr_u32(base, off, ptr as u32);
    wr_u32(base, off + 4, bytes.len() as u32);
}

unsafe fn wr_string(base: *mut u8, off: usize, s: &str) {
    wr_bytes(base, off, s.as_bytes())
}

/// Writes an event's string without copying it: its buffer becomes the result's block (a
/// `String`'s buffer is a global-allocator block of its capacity, align 1), tracked as outbound
/// and freed by post-return like any other. The event keeps an empty string.
unsafe fn wr_owned(base: *mut u8, off: usize, s: &mut String) {
    let s = core::mem::take(s);
    if s.capacity() == 0 {
        return wr_string(base, off, "");
    }
    let mut s = core::mem::ManuallyDrop::new(s.into_bytes());
    OUTBOUND.push((s.as_mut_ptr() as usize, layout(s.capacity(), 1)));
    wr_u32(base, off, s.as_mut_ptr() as u32);
    wr_u32(base, off + 4, s.len() as u32);
}

unsafe fn wr_opt_owned(base: *mut u8, off: usize, s: &mut Option<String>) {
    if let Some(s) = s {
        wr_u8(base, off, 1);
        wr_owned(base, off + 4, s);
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

/// [`wr_list`] for elements whose strings are moved into the result.
unsafe fn wr_list_mut<T>(
    base: *mut u8,
    off: usize,
    items: &mut [T],
    size: usize,
    align: usize,
    each: impl Fn(*mut u8, &mut T),
) {
    let ptr = out(items.len() * size, align);
    for (i, item) in items.iter_mut().enumerate() {
        each(ptr.add(i * size), item);
    }
    wr_u32(base, off, ptr as u32);
    wr_u32(base, off + 4, items.len() as u32);
}

unsafe fn wr_string_list(base: *mut u8, off: usize, items: &[String]) {
    wr_list(base, off, items, 8, 4, |p, s| wr_string(p, 0, s));
}

pub unsafe fn lower_description(d: &Description) -> *mut u8 {
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

/// Writes one event, moving its strings into the result (see [`wr_owned`]).
unsafe fn wr_event(p: *mut u8, e: &mut Event) {
    const PAYLOAD: usize = 8;
    let q = p.add(PAYLOAD);
    match e {
        Event::SessionStarted(info) => {
            wr_u8(p, 0, 0);
            wr_owned(q, 0, &mut info.id);
            wr_owned(q, 8, &mut info.auth);
            wr_opt_owned(q, 16, &mut info.model);
        }
        Event::TextDelta(s) => {
            wr_u8(p, 0, 1);
            wr_owned(q, 0, s);
        }
        Event::Text(s) => {
            wr_u8(p, 0, 2);
            wr_owned(q, 0, s);
        }
        Event::ThinkingDelta(s) => {
            wr_u8(p, 0, 3);
            wr_owned(q, 0, s);
        }
        Event::Thinking(s) => {
            wr_u8(p, 0, 4);
            wr_owned(q, 0, s);
        }
        Event::ToolCall(call) => {
            wr_u8(p, 0, 5);
            wr_owned(q, 0, &mut call.id);
            wr_owned(q, 8, &mut call.name);
            wr_owned(q, 16, &mut call.input);
        }
        Event::ToolResult(result) => {
            wr_u8(p, 0, 6);
            wr_owned(q, 0, &mut result.id);
            wr_owned(q, 8, &mut result.output);
            wr_u8(q, 16, result.is_error as u8);
        }
        Event::Retry(retry) => {
            wr_u8(p, 0, 7);
            wr_u32(q, 0, retry.attempt);
            wr_owned(q, 4, &mut retry.reason);
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
            wr_owned(q, 0, s);
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
            wr_owned(q, 4, &mut f.message);
        }
        Event::Note(s) => {
            wr_u8(p, 0, 11);
            wr_owned(q, 0, s);
        }
        Event::ToolCallStarted(start) => {
            wr_u8(p, 0, 12);
            wr_owned(q, 0, &mut start.id);
            wr_owned(q, 8, &mut start.name);
        }
        Event::ToolCallProgress(progress) => {
            wr_u8(p, 0, 13);
            wr_owned(q, 0, &mut progress.id);
            wr_u64(q, 8, progress.input_bytes);
        }
        Event::Quota(windows) => {
            wr_u8(p, 0, 14);
            wr_list_mut(q, 0, windows, 64, 8, |w, window| {
                wr_owned(w, 0, &mut window.name);
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
            wr_owned(q, 0, s);
        }
    }
}

/// Lowers `parse`'s events, taking their strings as the result's blocks (no copy per string).
pub unsafe fn lower_event_list(mut events: Vec<Event>) -> *mut u8 {
    let ret = out(8, 4);
    wr_list_mut(ret, 0, &mut events, 88, 8, |p, e| wr_event(p, e));
    ret
}

pub unsafe fn lower_event(mut e: Event) -> *mut u8 {
    let p = out(88, 8);
    wr_event(p, &mut e);
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
