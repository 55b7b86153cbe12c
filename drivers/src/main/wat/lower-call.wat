;; parse(lines) in one host call (WasmtimeStringLists#lowerAndCall): what alloc-strings.wat does
;; (the deferred post-return, then the cabi_realloc calls of a list<string>, each pointer checked),
;; then the strings' bytes copied from the scratch module, where the host staged them, into the
;; strings the guest's allocator returned, then the export called with the list, as
;; call-pair.wat calls it. Why: through wasmtime-java each host-to-guest call costs microseconds
;; of JNI, and a batch of short lines paid two (this helper's two halves, separately); a call
;; between two instances in one store costs nanoseconds, so copying a line 64 bytes a call is
;; cheaper than a crossing for the batches the host sends here (at most 16 KiB of bytes).
;;
;; The guest sees the calls the host's lowering and call would make, with the same arguments and
;; in the same order: post-return (if pending), cabi_realloc(0, 0, 4, 8 * count),
;; cabi_realloc(0, 0, 1, len) per string, then the export (list, count) with every string's bytes
;; in place; no guest code runs between the last allocation and the export, so when the bytes are
;; copied is not observable. Nothing is stored through a bad pointer: at the first one the helper
;; reports it (as alloc_string_list does) and does not call the export. The host tells the two
;; outcomes apart by the scratch's "calling" flag, set right before the export is called: set,
;; the reported i64 is the export's i32 result, zero-extended; not set, the packed bad pointer.
(module
  (import "env" "memory" (memory 0))
  (import "env" "cabi_realloc" (func $realloc (param i32 i32 i32 i32) (result i32)))
  (import "env" "post" (func $post (param i32)))
  (import "env" "export" (func $export (param i32 i32) (result i32)))
  (import "scratch" "length" (func $length (param i32) (result i32)))
  (import "scratch" "post_pending" (func $post_pending (result i32)))
  (import "scratch" "post_arg" (func $post_arg (result i32)))
  (import "scratch" "post_done" (func $post_done))
  (import "scratch" "count" (func $count (result i32)))
  (import "scratch" "report" (func $report (param i64 i32)))
  (import "scratch" "bytes_at" (func $bytes_at (result i32)))
  (import "scratch" "calling" (func $calling))
  (import "scratch" "byte64" (func $byte64 (param i32)
    (result i64 i64 i64 i64 i64 i64 i64 i64)))
  (import "scratch" "byte8" (func $byte8 (param i32) (result i64)))
  (import "scratch" "byte1" (func $byte1 (param i32) (result i32)))
  (func $inside (param $ptr i32) (param $size i32) (result i32)
    (i64.le_u
      (i64.add (i64.extend_i32_u (local.get $ptr)) (i64.extend_i32_u (local.get $size)))
      (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16))))
  (func $packed (param $what i32) (param $ptr i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $what)) (i64.const 32))
      (i64.extend_i32_u (local.get $ptr))))
  (func (export "lower_and_call")
    (local $count i32) (local $packed i64) (local $list i32)
    (local.set $count (call $count))
    (local.set $packed (call $alloc (local.get $count)))
    (if (i32.ne (i32.wrap_i64 (i64.shr_u (local.get $packed) (i64.const 32))) (i32.const -1))
      (then
        (call $report (local.get $packed) (memory.size))
        (return)))
    (local.set $list (i32.wrap_i64 (local.get $packed)))
    (call $copy (local.get $list) (local.get $count))
    (call $calling)
    (call $report
      (i64.extend_i32_u (call $export (local.get $list) (local.get $count)))
      (memory.size)))
  ;; alloc-strings.wat's $alloc, unchanged.
  (func $alloc (param $count i32) (result i64)
    (local $list i32) (local $i i32) (local $slot i32) (local $len i32) (local $ptr i32)
    (if (call $post_pending)
      (then
        (call $post (call $post_arg))
        (call $post_done)))
    (local.set $list
      (call $realloc (i32.const 0) (i32.const 0) (i32.const 4)
        (i32.shl (local.get $count) (i32.const 3))))
    (if (i32.or
          (i32.and (local.get $list) (i32.const 3))
          (i32.eqz (call $inside (local.get $list) (i32.shl (local.get $count) (i32.const 3)))))
      (then (return (call $packed (i32.const -2) (local.get $list)))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $len (call $length (local.get $i)))
        (local.set $ptr (call $realloc (i32.const 0) (i32.const 0) (i32.const 1) (local.get $len)))
        (if (i32.eqz (call $inside (local.get $ptr) (local.get $len)))
          (then (return (call $packed (local.get $i) (local.get $ptr)))))
        (local.set $slot (i32.add (local.get $list) (i32.shl (local.get $i) (i32.const 3))))
        (i32.store (local.get $slot) (local.get $ptr))
        (i32.store offset=4 (local.get $slot) (local.get $len))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $packed (i32.const -1) (local.get $list)))
  ;; Each string's bytes, from the scratch (one after the other from bytes_at) into the string the
  ;; allocator returned (its slot, written above; every one checked inside memory).
  (func $copy (param $list i32) (param $count i32)
    (local $i i32) (local $slot i32) (local $len i32) (local $src i32)
    (local.set $src (call $bytes_at))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $slot (i32.add (local.get $list) (i32.shl (local.get $i) (i32.const 3))))
        (local.set $len (i32.load offset=4 (local.get $slot)))
        (call $copy_string (i32.load (local.get $slot)) (local.get $src) (local.get $len))
        (local.set $src (i32.add (local.get $src) (local.get $len)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
  ;; One string of $len bytes from the scratch at $src to the driver's memory at $dst: sixty-four
  ;; bytes a call, then eight; the last few of a string of eight or more bytes as the eight that end
  ;; it (rewriting bytes already copied with the same values: the writes stay inside the string),
  ;; and a string shorter than eight bytes one byte a call. Every write is inside [$dst, $dst +
  ;; $len), every read inside the staged bytes.
  (func $copy_string (param $dst i32) (param $src i32) (param $len i32)
    (local $v0 i64) (local $v1 i64) (local $v2 i64) (local $v3 i64)
    (local $v4 i64) (local $v5 i64) (local $v6 i64) (local $v7 i64)
    (if (i32.lt_u (local.get $len) (i32.const 8))
      (then
        (block $ones
          (loop $one
            (br_if $ones (i32.eqz (local.get $len)))
            (i32.store8 (local.get $dst) (call $byte1 (local.get $src)))
            (local.set $dst (i32.add (local.get $dst) (i32.const 1)))
            (local.set $src (i32.add (local.get $src) (i32.const 1)))
            (local.set $len (i32.sub (local.get $len) (i32.const 1)))
            (br $one)))
        (return)))
    (block $sixty_fours
      (loop $sixty_four
        (br_if $sixty_fours (i32.lt_u (local.get $len) (i32.const 64)))
        (call $byte64 (local.get $src))
        (local.set $v7) (local.set $v6) (local.set $v5) (local.set $v4)
        (local.set $v3) (local.set $v2) (local.set $v1) (local.set $v0)
        (i64.store (local.get $dst) (local.get $v0))
        (i64.store offset=8 (local.get $dst) (local.get $v1))
        (i64.store offset=16 (local.get $dst) (local.get $v2))
        (i64.store offset=24 (local.get $dst) (local.get $v3))
        (i64.store offset=32 (local.get $dst) (local.get $v4))
        (i64.store offset=40 (local.get $dst) (local.get $v5))
        (i64.store offset=48 (local.get $dst) (local.get $v6))
        (i64.store offset=56 (local.get $dst) (local.get $v7))
        (local.set $dst (i32.add (local.get $dst) (i32.const 64)))
        (local.set $src (i32.add (local.get $src) (i32.const 64)))
        (local.set $len (i32.sub (local.get $len) (i32.const 64)))
        (br $sixty_four)))
    (block $eights
      (loop $eight
        (br_if $eights (i32.lt_u (local.get $len) (i32.const 8)))
        (i64.store (local.get $dst) (call $byte8 (local.get $src)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 8)))
        (local.set $src (i32.add (local.get $src) (i32.const 8)))
        (local.set $len (i32.sub (local.get $len) (i32.const 8)))
        (br $eight)))
    ;; 0-7 bytes left, after at least eight copied: the string's last eight
    (if (local.get $len)
      (then
        (i64.store
          (i32.sub (i32.add (local.get $dst) (local.get $len)) (i32.const 8))
          (call $byte8 (i32.sub (i32.add (local.get $src) (local.get $len)) (i32.const 8))))))))
