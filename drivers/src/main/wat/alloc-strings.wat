;; The per-string cabi_realloc calls of lowering a list<string> parameter, made from inside the
;; guest's store (WasmtimeStringLists): on wasmtime-java every host-to-guest call costs about as
;; much as parsing a line, and the canonical ABI needs one allocation per string.
;;
;; The host has already allocated the list through cabi_realloc(0, 0, 4, 8 * count) and written
;; each string's byte length into its element's length slot. For each element in order this
;; calls cabi_realloc(0, 0, 1, len) -- the very calls, with the very arguments and in the order,
;; that the canonical ABI's store_list_into_range makes -- and stores the pointer in the element's
;; pointer slot. The host then copies the bytes. Each pointer is checked as the host checks one
;; (inside memory after the call; alignment 1 needs no check) before it is stored: on the first
;; bad one the call returns (that pointer, its index); when all are good, (0, -1).
(module
  (import "env" "memory" (memory 0))
  (import "env" "cabi_realloc" (func $realloc (param i32 i32 i32 i32) (result i32)))
  (func (export "alloc_strings") (param $list i32) (param $count i32) (result i32 i32)
    (local $i i32) (local $slot i32) (local $len i32) (local $ptr i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $slot (i32.add (local.get $list) (i32.shl (local.get $i) (i32.const 3))))
        (local.set $len (i32.load offset=4 (local.get $slot)))
        (local.set $ptr (call $realloc (i32.const 0) (i32.const 0) (i32.const 1) (local.get $len)))
        (if (i64.gt_u
              (i64.add (i64.extend_i32_u (local.get $ptr)) (i64.extend_i32_u (local.get $len)))
              (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16)))
          (then (return (local.get $ptr) (local.get $i))))
        (i32.store (local.get $slot) (local.get $ptr))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0) (i32.const -1)))
