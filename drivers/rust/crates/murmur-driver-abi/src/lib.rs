//! The `murmur:driver@0.6.0` process-driver contract for the built-in drivers.
//!
//! A driver crate implements [`Driver`] as plain Rust (natively unit-tested) and invokes
//! [`export_driver!`] once; on `wasm32` that macro emits the five canonical-ABI exports, their
//! `cabi_post_*` companions and `cabi_realloc`, all backed by [`canon`]. Nothing is imported.

pub mod fast;
pub mod json;
pub mod json_text;
pub mod lenient;
pub mod small_alloc;
pub mod types;
pub mod util;

/// Small blocks from free lists, the rest from the standard allocator (see `small_alloc`).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
pub(crate) static ALLOCATOR: small_alloc::SmallBlocks<std::alloc::System> = small_alloc::SmallBlocks::new(std::alloc::System);

#[cfg(target_arch = "wasm32")]
pub mod canon;

// Native test support only: it reads files, which a driver never does.
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

// Native test support only: differential tests of a typed parser against its `Value` oracle.
#[cfg(not(target_arch = "wasm32"))]
pub mod oracle;

pub use types::*;

/// One harness's driver. The runtime keeps one instance for a whole run, so `launch` may store
/// what `parse` and `classify_exit` need later; `parse` must give the same events however the
/// lines are split into batches, so any state that spans lines lives in `self`.
pub trait Driver: Default + 'static {
    /// What the driver drives; called once when the driver is loaded.
    fn describe() -> Description;
    /// Plans one turn; `Err` refuses it with a message the runtime reports.
    fn launch(&mut self, request: &LaunchRequest) -> Result<LaunchPlan, String>;
    /// Reads a batch of complete stdout lines into events.
    fn parse(&mut self, lines: &[String]) -> Vec<Event>;
    /// Classifies a run whose output ended without a terminal event: returns only `TurnEnd` or
    /// `TurnFailed`, and `TurnFailed{Canceled}` whenever `exit.interrupted`.
    fn classify_exit(&mut self, exit: &ExitStatus) -> Event;
    /// Reads what the login command printed.
    fn read_login(output: &LoginOutput) -> LoginState;
}

/// Emits the canonical-ABI exports of `murmur:driver/process@0.6.0` for a [`Driver`] type, on
/// `wasm32` only. Use once per driver crate, at the crate root.
#[macro_export]
macro_rules! export_driver {
    ($driver:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[doc(hidden)]
        pub mod __murmur_driver_exports {
            #[allow(unused_imports)]
            use super::*;
            use $crate::canon;
            use $crate::Driver;

            // The instance lives for the whole run and wasm is single-threaded, so one global
            // holds the driver's state between calls.
            static mut DRIVER: Option<$driver> = None;

            fn driver() -> &'static mut $driver {
                unsafe { DRIVER.get_or_insert_with(<$driver as Default>::default) }
            }

            #[no_mangle]
            pub unsafe extern "C" fn cabi_realloc(
                old_ptr: *mut u8,
                old_size: usize,
                align: usize,
                new_size: usize,
            ) -> *mut u8 {
                canon::realloc(old_ptr, old_size, align, new_size)
            }

            #[export_name = "murmur:driver/process@0.6.0#describe"]
            pub unsafe extern "C" fn describe() -> *mut u8 {
                canon::begin_call();
                canon::lower_description(&<$driver as Driver>::describe())
            }

            #[export_name = "cabi_post_murmur:driver/process@0.6.0#describe"]
            pub unsafe extern "C" fn post_describe(_ret: *mut u8) {
                canon::end_call();
            }

            #[export_name = "murmur:driver/process@0.6.0#launch"]
            pub unsafe extern "C" fn launch(request: *mut u8) -> *mut u8 {
                canon::begin_call();
                let request = canon::lift_launch_request(request);
                canon::lower_launch_result(&driver().launch(&request))
            }

            #[export_name = "cabi_post_murmur:driver/process@0.6.0#launch"]
            pub unsafe extern "C" fn post_launch(_ret: *mut u8) {
                canon::end_call();
            }

            #[export_name = "murmur:driver/process@0.6.0#parse"]
            pub unsafe extern "C" fn parse(lines: *mut u8, count: usize) -> *mut u8 {
                canon::begin_call();
                let lines = canon::lift_lines(lines, count);
                let events = driver().parse(&lines);
                canon::free_lines(lines);
                canon::lower_event_list(events)
            }

            #[export_name = "cabi_post_murmur:driver/process@0.6.0#parse"]
            pub unsafe extern "C" fn post_parse(_ret: *mut u8) {
                canon::end_call();
            }

            #[export_name = "murmur:driver/process@0.6.0#classify-exit"]
            pub unsafe extern "C" fn classify_exit(
                code_set: i32,
                code: i32,
                signal_set: i32,
                signal: i32,
                tail_ptr: *mut u8,
                tail_len: usize,
                interrupted: i32,
                saw_terminal: i32,
            ) -> *mut u8 {
                canon::begin_call();
                let exit = canon::lift_exit_status(
                    code_set, code, signal_set, signal, tail_ptr, tail_len, interrupted, saw_terminal,
                );
                canon::lower_event(driver().classify_exit(&exit))
            }

            #[export_name = "cabi_post_murmur:driver/process@0.6.0#classify-exit"]
            pub unsafe extern "C" fn post_classify_exit(_ret: *mut u8) {
                canon::end_call();
            }

            #[export_name = "murmur:driver/process@0.6.0#read-login"]
            pub unsafe extern "C" fn read_login(
                code_set: i32,
                code: i32,
                stdout_ptr: *mut u8,
                stdout_len: usize,
                stderr_ptr: *mut u8,
                stderr_len: usize,
            ) -> *mut u8 {
                canon::begin_call();
                let output = canon::lift_login_output(
                    code_set, code, stdout_ptr, stdout_len, stderr_ptr, stderr_len,
                );
                canon::lower_login_state(&<$driver as Driver>::read_login(&output))
            }

            #[export_name = "cabi_post_murmur:driver/process@0.6.0#read-login"]
            pub unsafe extern "C" fn post_read_login(_ret: *mut u8) {
                canon::end_call();
            }
        }
    };
}

#[cfg(test)]
mod tests;
