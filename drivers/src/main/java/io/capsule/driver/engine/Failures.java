package io.capsule.driver.engine;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.DriverTrap;
import java.time.Duration;

/**
 * The refusals the engines raise. A module that cannot be compiled is {@code E-RUN-032} (it cannot
 * load with no grants); a call that traps, overruns or reads out of bounds is {@code E-RUN-034} (a
 * driver call failed) — the loader turns that into {@code E-RUN-032} while loading.
 */
final class Failures {
  private Failures() {}

  static DriverException unloadable(String message) {
    return new DriverException(Diagnostic.of(Code.E_RUN_032, message));
  }

  static DriverException unloadable(String message, Throwable cause) {
    return new DriverException(Diagnostic.of(Code.E_RUN_032, message), cause);
  }

  static DriverTrap trap(String export, String what, Throwable cause) {
    return new DriverTrap(
        Diagnostic.of(Code.E_RUN_034, "the guest trapped in " + export + ": " + what)
            .with("export", export)
            .with("cause", "trap"),
        cause);
  }

  static DriverTrap deadline(String export, Duration deadline, Throwable cause) {
    return new DriverTrap(
        Diagnostic.of(
                Code.E_RUN_034,
                "the guest overran its call deadline of " + pretty(deadline) + " in " + export)
            .with("export", export)
            .with("cause", "deadline"),
        cause);
  }

  static DriverException noSuchExport(String export) {
    return new DriverException(
        Diagnostic.of(Code.E_RUN_034, "the driver exports no function " + export)
            .with("export", export));
  }

  static AbiViolation outOfBounds(long address, long length, long size) {
    return new AbiViolation(
        Diagnostic.of(
            Code.E_RUN_034,
            "guest memory access of "
                + length
                + " bytes at 0x"
                + Long.toHexString(address)
                + " is outside its "
                + size
                + " bytes"));
  }

  static AbiViolation badRealloc(String why) {
    return new AbiViolation(Diagnostic.of(Code.E_RUN_034, "cabi_realloc " + why));
  }

  static String pretty(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
  }
}
