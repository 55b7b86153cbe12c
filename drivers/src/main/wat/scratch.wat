;; The scratch area of the engine's helpers (alloc-strings.wat, call-pair.wat): a memory of its
;; own, never the driver's, that the host reads and writes through a direct buffer, so that what
;; the host passes to a helper and what a helper hands back cross no JNI boundary as values.
;; Why a module of its own: the driver's memory belongs to the guest (only what its allocator
;; returned is the host's to write), and a WebAssembly 1.0 module has one memory, so a helper,
;; which needs the driver's memory, reads and writes this one through these exports (a call
;; between two instances in one store costs nanoseconds; a host-to-guest call through
;; wasmtime-java microseconds, most of it marshalling each parameter and result).
;;
;; Layout (little-endian), written by the host (H) or by a helper (G) before the host reads it:
;;   byte 0   i32 H, G: 1 while a post-return is pending (the host sets it, the string-list
;;            helper clears it once the post-return returned)
;;   byte 4   i32 H: the post-return's argument
;;   byte 8   i32 H: how many strings the list has (alloc_string_list)
;;   byte 12  i32 G: the driver memory's size in pages when the helper returned
;;   byte 16  i64 G: the helper's result (alloc_string_list's packed one; call_pair's i32,
;;            zero-extended)
;;   byte 24  i32 H: call_pair's first argument; byte 28, its second
;;   byte 32  i32 H: where the strings' bytes start (lower_and_call), one after the other in order
;;   byte 36  i32 H, G: 0 until lower_and_call calls the export (the host clears it, the helper sets
;;            it right before the call: a trap with it set is the export's)
;;   byte 40  i32 H: the byte length of each string of the list, element i at byte 40 + 4 * i
;; One page holds 16 374 lengths; the host grows the memory for a longer list, up to the 2^28
;; elements a list's 8-byte slots can have under 2 GiB (2^30 + 40 bytes: 16 385 pages). For
;; lower_and_call the host stages the strings' bytes after the lengths and grows the memory for
;; them too (it does so only for batches of at most 16 KiB of bytes).
(module
  (memory (export "scratch") 1 16385)
  (func (export "length") (param $i i32) (result i32)
    (i32.load offset=40 (i32.shl (local.get $i) (i32.const 2))))
  (func (export "post_pending") (result i32)
    (i32.load (i32.const 0)))
  (func (export "post_arg") (result i32)
    (i32.load (i32.const 4)))
  (func (export "post_done")
    (i32.store (i32.const 0) (i32.const 0)))
  (func (export "count") (result i32)
    (i32.load (i32.const 8)))
  (func (export "arg") (param $i i32) (result i32)
    (i32.load offset=24 (i32.shl (local.get $i) (i32.const 2))))
  (func (export "report") (param $result i64) (param $pages i32)
    (i64.store (i32.const 16) (local.get $result))
    (i32.store (i32.const 12) (local.get $pages)))
  (func (export "bytes_at") (result i32)
    (i32.load (i32.const 32)))
  (func (export "calling")
    (i32.store (i32.const 36) (i32.const 1)))
  ;; The staged bytes, sixty-four, eight and one at a time (lower_and_call's copy: the fewer calls
  ;; a string takes, the less its copy costs; sixty-four come back as eight results of one call).
  (func (export "byte64") (param $at i32)
    (result i64 i64 i64 i64 i64 i64 i64 i64)
    (i64.load (local.get $at))
    (i64.load offset=8 (local.get $at))
    (i64.load offset=16 (local.get $at))
    (i64.load offset=24 (local.get $at))
    (i64.load offset=32 (local.get $at))
    (i64.load offset=40 (local.get $at))
    (i64.load offset=48 (local.get $at))
    (i64.load offset=56 (local.get $at)))
  (func (export "byte8") (param $at i32) (result i64)
    (i64.load (local.get $at)))
  (func (export "byte1") (param $at i32) (result i32)
    (i32.load8_u (local.get $at)))
  ;; What the string-list helper imports as its post-return when none is to be called.
  (func (export "no_post") (param i32)))
