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

use std::alloc::{alloc_zeroed, dealloc, Layout};

pub(crate) static mut INBOUND: Vec<(usize, Layout)> = Vec::new();
pub(crate) static mut OUTBOUND: Vec<(usize, Layout)> = Vec::new();

pub(crate) fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

pub(crate) unsafe fn tracked_alloc(list: &mut Vec<(usize, Layout)>, size: usize, align: usize) -> *mut u8 {
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

pub(crate) unsafe fn done_lifting() {
    free_all(&mut INBOUND);
}

mod lift;
mod lower;

pub use lift::*;
pub use lower::*;
