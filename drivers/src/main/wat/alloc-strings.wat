;; The cabi_realloc calls of lowering a list<string> parameter, made from inside the guest's store
;; in one host call (WasmtimeStringLists), preceded by the previous call's post-return when the
;; host deferred it: on wasmtime-java a host-to-guest call costs about as much as parsing a line,
;; most of it in marshalling each parameter and result through JNI, so the helper takes no value
;; and returns none: what it needs and what it hands back go through the scratch module
;; (scratch.wat). The canonical ABI needs one allocation per string.
;;
;; When the scratch module says a post-return is pending, alloc_string_list first calls it (the
;; import "post", the driver's cabi_post_* export the host bound this instance to) with the
;; argument the host wrote, then clears the flag: the guest sees post-return, then the
;; allocations, then the export, the order in which the host would make these calls one by one.
;; Then, for the count the host wrote, alloc_string_list makes the calls CanonicalABI.md
;; store_list_into_range makes, with the same arguments and in the same order:
;; cabi_realloc(0, 0, 4, 8 * count) for the list, then for each element in order
;; cabi_realloc(0, 0, 1, len) and the element's pointer and length stored in its slot. Each length
;; comes from the scratch module, where the host wrote it before the call. Each pointer is checked as the host checks one before anything is stored
;; through it: the list's aligned to 4 and inside memory, a string's inside memory (alignment 1
;; needs no check). The host then copies each string's bytes. The result, written into the
;; scratch with the driver memory's size in pages (so the host knows whether the memory grew
;; without asking wasmtime), is one i64: -1 in the high 32 bits and the list's pointer in the low
;; 32 when all is well; else the low 32 bits hold the first bad pointer and the high 32 what it
;; was for, -2 for the list, else the element's index.
(module
  (import "env" "memory" (memory 0))
  (import "env" "cabi_realloc" (func $realloc (param i32 i32 i32 i32) (result i32)))
  (import "env" "post" (func $post (param i32)))
  (import "scratch" "length" (func $length (param i32) (result i32)))
  (import "scratch" "post_pending" (func $post_pending (result i32)))
  (import "scratch" "post_arg" (func $post_arg (result i32)))
  (import "scratch" "post_done" (func $post_done))
  (import "scratch" "count" (func $count (result i32)))
  (import "scratch" "report" (func $report (param i64 i32)))
  ;; Whether [ptr, ptr + size) lies inside the memory, computed in 64 bits.
  (func $inside (param $ptr i32) (param $size i32) (result i32)
    (i64.le_u
      (i64.add (i64.extend_i32_u (local.get $ptr)) (i64.extend_i32_u (local.get $size)))
      (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16))))
  (func $packed (param $what i32) (param $ptr i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $what)) (i64.const 32))
      (i64.extend_i32_u (local.get $ptr))))
  (func (export "alloc_string_list")
    (call $report (call $alloc (call $count)) (memory.size)))
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
    (call $packed (i32.const -1) (local.get $list))))
