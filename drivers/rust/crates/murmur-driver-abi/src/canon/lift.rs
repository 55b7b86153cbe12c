//! Lifting: the host's parameters, in linear memory or flat, into owned Rust values. The export
//! owns what the host lowered (canonical ABI), so each string's block becomes its `String` and
//! each list or spilled-parameter block is freed once read.

use super::{free_inbound, trap};
use crate::types::*;

unsafe fn rd_u8(base: *const u8, off: usize) -> u8 {
    base.add(off).read()
}

unsafe fn rd_u32(base: *const u8, off: usize) -> u32 {
    (base.add(off) as *const u32).read_unaligned()
}

/// Takes the host's `len`-byte, align-1 block as the string: no copy when it is UTF-8 (the block
/// was allocated by the global allocator with exactly that layout, so `String` may own it).
unsafe fn lift_string(ptr: *const u8, len: usize) -> String {
    if len == 0 {
        return String::new();
    }
    let bytes = core::slice::from_raw_parts(ptr, len);
    if crate::util::is_utf8(bytes) {
        return String::from_raw_parts(ptr as *mut u8, len, len);
    }
    let lossy = String::from_utf8_lossy(bytes).into_owned();
    free_inbound(ptr, len, 1);
    lossy
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
    let list = (0..count).map(|i| rd_string(ptr, i * 8)).collect();
    free_inbound(ptr, count * 8, 4);
    list
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
    // The record spilled to memory (more than 16 flat values): one block of 100 bytes, align 4.
    let request = LaunchRequest {
        model: rd_opt_string(p, 0),
        system_prompt: rd_string(p, 12),
        config: rd_opt_string(p, 20),
        bridge,
        session: Session { id: rd_string(p, 68), mode },
        harness_version: rd_opt_string(p, 80),
        task: rd_string(p, 92),
    };
    free_inbound(p, 100, 4);
    request
}

pub unsafe fn lift_lines(ptr: *mut u8, count: usize) -> Vec<String> {
    lift_string_list(ptr as *const u8, count)
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
    output
}
