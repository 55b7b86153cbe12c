;; The scratch area of the string-list helper (alloc-strings.wat): a memory of its own, never the
;; driver's, that the host writes through a direct buffer before the helper's one call reads it.
;; Why a module of its own: the driver's memory belongs to the guest (only what its allocator
;; returned is the host's to write), and a WebAssembly 1.0 module has one memory, so the helper,
;; which needs the driver's memory, reads this one through these exports (a call between two
;; instances in one store costs nanoseconds; a host-to-guest call through wasmtime-java tens of
;; microseconds).
;;
;; Layout (little-endian i32s): byte 0, 1 while a post-return is pending (the host sets it, the
;; helper clears it once the post-return returned); byte 4, the post-return's argument; from byte
;; 8, the byte length of each string of the list, element i at byte 8 + 4 * i. One page holds
;; 16 382 lengths; the host grows the memory for a longer list, up to the 2^28 elements a list's
;; 8-byte slots can have under 2 GiB.
(module
  (memory (export "scratch") 1 16385)
  (func (export "length") (param $i i32) (result i32)
    (i32.load offset=8 (i32.shl (local.get $i) (i32.const 2))))
  (func (export "post_pending") (result i32)
    (i32.load (i32.const 0)))
  (func (export "post_arg") (result i32)
    (i32.load (i32.const 4)))
  (func (export "post_done")
    (i32.store (i32.const 0) (i32.const 0)))
  ;; What the helper imports as its post-return when none is to be called.
  (func (export "no_post") (param i32)))
