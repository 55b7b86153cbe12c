;; One call of a driver export whose core type is (i32, i32) -> i32, made from inside the guest's
;; store (WasmtimeCallPairs): the host writes the two arguments into the scratch module
;; (scratch.wat) and calls call_pair, which takes no parameters and returns no results, instead of
;; calling the export through wasmtime-java, which marshals each parameter and result through JNI
;; as a Val. That is the type of every contract function taking one list or string and returning
;; a value in a return area: parse(lines) -> list<event> above all, called once per batch.
;;
;; call_pair calls the import "export" (the driver export the host bound this instance to) once,
;; with the scratch's two arguments, and nothing else of the driver's: the guest sees the call the
;; host would make. It writes the export's result and the driver memory's size in pages into the
;; scratch, so the host learns whether the memory grew without asking wasmtime for its size.
(module
  (import "env" "memory" (memory 0))
  (import "env" "export" (func $export (param i32 i32) (result i32)))
  (import "scratch" "arg" (func $arg (param i32) (result i32)))
  (import "scratch" "report" (func $report (param i64 i32)))
  (func (export "call_pair")
    (call $report
      (i64.extend_i32_u (call $export (call $arg (i32.const 0)) (call $arg (i32.const 1))))
      (memory.size))))
