;; The cabi_realloc calls of lowering a list<string> parameter, made from inside the guest's store
;; (WasmtimeStringLists): on wasmtime-java a host-to-guest call costs about as much as parsing a
;; line, most of it in marshalling each parameter and result through JNI (measured: a call with 17
;; parameters cost more than two calls with 9 values in all), so the helper takes and returns as
;; few values as it can. The canonical ABI needs one allocation per string.
;;
;; alloc_list(count) calls cabi_realloc(0, 0, 4, 8 * count) for the list and remembers the list
;; and the count; the host checks the pointer and writes each string's byte length into its
;; element's length slot. alloc_strings() then, for each element in order, calls
;; cabi_realloc(0, 0, 1, len) -- the very calls, with the very arguments and in the order, that the
;; canonical ABI's store_list_into_range makes -- and stores the pointer in the element's pointer
;; slot. The host then copies the bytes. Each pointer is checked as the host checks one (inside
;; memory after the call; alignment 1 needs no check) before it is stored. alloc_strings returns
;; one i64: the index of the first bad element in the high 32 bits and its pointer in the low 32,
;; or -1 in the high bits (and 0 in the low) when all are good.
(module
  (import "env" "memory" (memory 0))
  (import "env" "cabi_realloc" (func $realloc (param i32 i32 i32 i32) (result i32)))
  (global $list (mut i32) (i32.const 0))
  (global $count (mut i32) (i32.const 0))
  (func (export "alloc_list") (param $count i32) (result i32)
    (global.set $count (local.get $count))
    (global.set $list
      (call $realloc (i32.const 0) (i32.const 0) (i32.const 4)
        (i32.shl (local.get $count) (i32.const 3))))
    (global.get $list))
  (func (export "alloc_strings") (result i64)
    (local $i i32) (local $slot i32) (local $len i32) (local $ptr i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (global.get $count)))
        (local.set $slot (i32.add (global.get $list) (i32.shl (local.get $i) (i32.const 3))))
        (local.set $len (i32.load offset=4 (local.get $slot)))
        (local.set $ptr (call $realloc (i32.const 0) (i32.const 0) (i32.const 1) (local.get $len)))
        (if (i64.gt_u
              (i64.add (i64.extend_i32_u (local.get $ptr)) (i64.extend_i32_u (local.get $len)))
              (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16)))
          (then
            (return
              (i64.or
                (i64.shl (i64.extend_i32_u (local.get $i)) (i64.const 32))
                (i64.extend_i32_u (local.get $ptr))))))
        (i32.store (local.get $slot) (local.get $ptr))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i64.const 0xffffffff00000000)))
