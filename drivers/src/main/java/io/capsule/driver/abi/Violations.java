package io.capsule.driver.abi;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.wasm.AbiViolation;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds the {@link AbiViolation}s of this package: code {@code E-RUN-034}, one precise line. */
final class Violations {
  private Violations() {}

  static AbiViolation of(String format, Object... args) {
    return new AbiViolation(Diagnostic.of(Code.E_RUN_034, String.format(format, args)));
  }

  /**
   * The same violation, found one level further out: {@code segment} ({@code [3]}, {@code .name},
   * {@code .some}) is prepended to its {@code path} detail.
   */
  static AbiViolation within(AbiViolation e, String segment) {
    Diagnostic d = e.diagnostic();
    Map<String, String> details = new LinkedHashMap<>(d.details());
    details.put(PATH, segment + details.getOrDefault(PATH, ""));
    return new AbiViolation(new Diagnostic(d.code(), d.message(), d.hint(), details));
  }

  /** The detail naming where in a lifted value a violation was found. */
  static final String PATH = "path";

  /** An unsigned 32-bit address as {@code 0x…}. */
  static String hex(long address) {
    return "0x" + Long.toHexString(address);
  }

  static long unsigned(int value) {
    return Integer.toUnsignedLong(value);
  }
}
