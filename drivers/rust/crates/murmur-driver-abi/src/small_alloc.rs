//! The drivers' global allocator on `wasm32`: small blocks from per-size free lists, everything
//! else from the standard allocator (dlmalloc on `wasm32-unknown-unknown`).
//!
//! Why (issue #15): a `parse` call allocates and frees several small blocks per line — the line
//! itself (the host's `cabi_realloc`), each event string, the events' list — and dlmalloc's
//! `malloc`/`free` (bins, chunk headers, coalescing) were ~18 % of `jsonl`'s guest time at batch 16
//! (wasmtime, jitdump profile). Here a block of at most [`MAX_SMALL`] bytes is one pop or push on
//! the list of its 16-byte size class. Blocks are carved from 16 KiB chunks the standard allocator
//! gives and are kept on their class's list when freed, never handed back: the small blocks a
//! driver holds are bounded by the most it ever held at once, per class, and a large block (a long
//! line, a big result) is still allocated and freed by the standard allocator, so the module's
//! memory maximum and the host's cap bound everything as before (an allocation that cannot be
//! served returns null, which Rust turns into a trap).
//!
//! Single-threaded: the state is not synchronised. WebAssembly without the threads proposal runs
//! one thread per instance, which is the only place this is the global allocator; native tests
//! use a local instance on one thread.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::ptr::null_mut;

/// A block of `n > 0` bytes, align 1, from the global allocator — on wasm32 called directly, not
/// through `std::alloc`'s two out-of-line calls per block (`canon` does the same) — or null.
#[inline(always)]
pub(crate) unsafe fn alloc_bytes(n: usize) -> *mut u8 {
    let layout = Layout::from_size_align_unchecked(n, 1);
    #[cfg(target_arch = "wasm32")]
    {
        crate::ALLOCATOR.alloc(layout)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::alloc::alloc(layout)
    }
}

/// Size classes are multiples of this, which is also every block's alignment.
const GRAIN: usize = 16;
/// The largest block served from the free lists; larger ones go to the standard allocator.
pub const MAX_SMALL: usize = 512;
const CLASSES: usize = MAX_SMALL / GRAIN;
/// What is taken from the standard allocator at a time to carve small blocks from.
const CHUNK: usize = 16 * 1024;

struct State {
    /// Per class, the first free block; a free block's first word points to the next.
    free: [*mut u8; CLASSES],
    /// The part of the current chunk not yet carved.
    bump: *mut u8,
    bump_end: *mut u8,
}

pub struct SmallBlocks<A> {
    backing: A,
    state: UnsafeCell<State>,
}

// Only ever used from one thread (see the module comment).
unsafe impl<A: Sync> Sync for SmallBlocks<A> {}

impl<A> SmallBlocks<A> {
    pub const fn new(backing: A) -> Self {
        SmallBlocks {
            backing,
            state: UnsafeCell::new(State { free: [null_mut(); CLASSES], bump: null_mut(), bump_end: null_mut() }),
        }
    }
}

/// The class of a layout served here, or `None` for the standard allocator.
#[inline(always)]
fn class_of(layout: &Layout) -> Option<usize> {
    let size = layout.size();
    if size <= MAX_SMALL && layout.align() <= GRAIN {
        // Size 0 never reaches a GlobalAlloc from std, but would get the smallest block.
        Some(size.saturating_sub(1) / GRAIN)
    } else {
        None
    }
}

impl<A: GlobalAlloc> SmallBlocks<A> {
    #[inline(never)]
    unsafe fn carve(&self, class: usize) -> *mut u8 {
        let state = &mut *self.state.get();
        let size = (class + 1) * GRAIN;
        if (state.bump_end as usize) - (state.bump as usize) < size {
            // The rest of the old chunk (less than one block of this class) is abandoned: at most
            // 496 bytes per 16 KiB.
            let chunk = self.backing.alloc(Layout::from_size_align_unchecked(CHUNK, GRAIN));
            if chunk.is_null() {
                return null_mut();
            }
            state.bump = chunk;
            state.bump_end = chunk.add(CHUNK);
        }
        let block = state.bump;
        state.bump = block.add(size);
        block
    }
}

unsafe impl<A: GlobalAlloc> GlobalAlloc for SmallBlocks<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class_of(&layout) {
            Some(class) => {
                let state = &mut *self.state.get();
                let head = state.free[class];
                if head.is_null() {
                    return self.carve(class);
                }
                state.free[class] = *(head as *mut *mut u8);
                head
            }
            None => self.backing.alloc(layout),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match class_of(&layout) {
            Some(class) => {
                let state = &mut *self.state.get();
                *(ptr as *mut *mut u8) = state.free[class];
                state.free[class] = ptr;
            }
            None => self.backing.dealloc(ptr, layout),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match class_of(&layout) {
            Some(_) => {
                let ptr = self.alloc(layout);
                if !ptr.is_null() {
                    ptr.write_bytes(0, layout.size());
                }
                ptr
            }
            None => self.backing.alloc_zeroed(layout),
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (class_of(&layout), class_of(&new_layout)) {
            // The block already holds the new size.
            (Some(old), Some(new)) if old == new => ptr,
            (None, None) => self.backing.realloc(ptr, layout, new_size),
            _ => {
                let new_ptr = self.alloc(new_layout);
                if !new_ptr.is_null() {
                    core::ptr::copy_nonoverlapping(ptr, new_ptr, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new_ptr
            }
        }
    }
}
