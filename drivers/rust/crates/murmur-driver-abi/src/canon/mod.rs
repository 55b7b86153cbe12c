//! Hand-written canonical-ABI lifting and lowering for exactly the types the five exports of
//! `murmur:driver/process@0.6.0` pass (wit-bindgen is not packaged for the offline toolchain).
//!
//! Memory ownership, as the canonical ABI gives it. `cabi_realloc` is the global allocator and
//! nothing more: it remembers nothing, so whatever else allocates through it keeps its memory —
//! the WASI preview1 adapter allocates its state once through the main module's `cabi_realloc`,
//! and a tracking allocator that freed everything after lifting corrupted that state. The
//! parameters the host lowered are owned by the export: lifting takes each string as the `String`
//! it becomes (no copy when it is valid UTF-8) and frees each list and spilled-parameter block by
//! its ABI layout, exactly as the host allocated them (one `cabi_realloc` per string and list).
//! Everything the export allocates for its result is tracked as *outbound* and freed by the
//! `cabi_post_*` function; it is also freed at the start of the next export call, so a host that
//! never calls post-return leaks nothing across calls.
//!
//! Layouts (offsets in bytes, all little-endian), derived from the canonical ABI:
//! - string, list: `{ptr: u32 @0, len: u32 @4}`, size 8, align 4.
//! - option<string>/option<list>: disc u8 @0, payload @4, size 12; option<s32> 8;
//!   option<u64>/option<f64>: disc @0, payload @8, size 16, align 8.
//! - event: disc u8 @0, payload @8 (usage and quota windows need align 8), size 88, align 8.
//! - quota-window: name @0, used @8, resets-at @24, window-minutes @40, state @56, size 64.
//! - description: size 76; launch-request: size 100; result<launch-plan,string>: size 56;
//!   login-state: size 12. Each lowering function names its field offsets.

use std::alloc::{GlobalAlloc, Layout};

// The global allocator called directly, not through `std::alloc`: there every block goes through
// two calls that wasm32 keeps out of line (`__rust_alloc`, then `__rg_alloc`), and a short line
// takes four allocations or frees here (its block from the host, freed after `parse`; its event's
// string, freed by post-return). Same allocator, so any block may be freed either way.
#[inline(always)]
unsafe fn alloc(layout: Layout) -> *mut u8 {
    crate::ALLOCATOR.alloc(layout)
}

#[inline(always)]
unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    crate::ALLOCATOR.alloc_zeroed(layout)
}

#[inline(always)]
unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    crate::ALLOCATOR.dealloc(ptr, layout)
}

#[inline(always)]
unsafe fn grow(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    crate::ALLOCATOR.realloc(ptr, layout, new_size)
}

pub(crate) static mut OUTBOUND: Vec<(usize, Layout)> = Vec::new();

pub(crate) fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

/// A block for a result, freed by post-return; zeroed when `zeroed` (a record whose padding and
/// unset options the host reads), else left as the allocator gives it (bytes about to be copied in).
pub(crate) unsafe fn tracked_alloc(
    list: &mut Vec<(usize, Layout)>,
    size: usize,
    align: usize,
    zeroed: bool,
) -> *mut u8 {
    if size == 0 {
        // A zero-length string or list needs an aligned, never-dereferenced pointer.
        return align.max(1) as *mut u8;
    }
    let layout = match Layout::from_size_align(size, align.max(1)) {
        Ok(layout) => layout,
        Err(_) => trap(),
    };
    let ptr = if zeroed { alloc_zeroed(layout) } else { alloc(layout) };
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

/// `cabi_realloc`: the global allocator. A zero-size request gets an aligned pointer that is
/// never dereferenced nor freed; a grow keeps the contents, as `realloc` does.
#[inline(always)]
pub unsafe fn realloc(old_ptr: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
    let align = align.max(1);
    if new_size == 0 {
        if !old_ptr.is_null() && old_size > 0 {
            dealloc(old_ptr, layout(old_size, align));
        }
        return align as *mut u8;
    }
    let ptr = if old_ptr.is_null() || old_size == 0 {
        alloc(layout(new_size, align))
    } else {
        grow(old_ptr, layout(old_size, align), new_size)
    };
    if ptr.is_null() {
        trap();
    }
    ptr
}

#[inline(always)]
pub(crate) fn layout(size: usize, align: usize) -> Layout {
    match Layout::from_size_align(size, align) {
        Ok(layout) => layout,
        Err(_) => trap(),
    }
}

/// Frees a block the host allocated through [`realloc`] with this size and alignment.
pub(crate) unsafe fn free_inbound(ptr: *const u8, size: usize, align: usize) {
    if size > 0 {
        dealloc(ptr as *mut u8, layout(size, align));
    }
}

/// Frees `parse`'s lines once read: each string's block and the list's, directly (see `alloc`).
pub unsafe fn free_lines(lines: Vec<String>) {
    let mut lines = core::mem::ManuallyDrop::new(lines);
    for line in lines.iter_mut() {
        let line = core::mem::take(line);
        if line.capacity() > 0 {
            let mut bytes = core::mem::ManuallyDrop::new(line.into_bytes());
            dealloc(bytes.as_mut_ptr(), layout(bytes.capacity(), 1));
        }
    }
    if lines.capacity() > 0 {
        match Layout::array::<String>(lines.capacity()) {
            Ok(list) => dealloc(lines.as_mut_ptr() as *mut u8, list),
            Err(_) => trap(),
        }
    }
}

pub unsafe fn begin_call() {
    free_all(&mut OUTBOUND);
}

pub unsafe fn end_call() {
    free_all(&mut OUTBOUND);
}

mod lift;
mod lower;

pub use lift::*;
pub use lower::*;
