package io.capsule.driver.abi;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.AbiViolation;

/** Builds the {@link AbiViolation}s of this package: code {@code E-RUN-034}, one precise line. */
final class Violations {
  private Violations() {}

  static AbiViolation of(String format, Object... args) {
    return new AbiViolation(Diagnostic.of(Code.E_RUN_034, String.format(format, args)));
  }

  /** An unsigned 32-bit address as {@code 0x…}. */
  static String hex(long address) {
    return "0x" + Long.toHexString(address);
  }

  static long unsigned(int value) {
    return Integer.toUnsignedLong(value);
  }
}
