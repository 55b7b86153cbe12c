package io.capsule.driver.wasi;

import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which component imports the driver host serves: the WASI 0.2 interfaces standard toolchains link
 * (docs/run-semantics.md §1.2), at any {@code 0.2.x} version, all with empty grants. Everything
 * else — sockets, HTTP, another package's host functions — is refused at load. Pure.
 */
public final class WasiInterfaces {
  private WasiInterfaces() {}

  /** {@code package/interface}, without the version. */
  public static final Set<String> SERVED =
      Set.of(
          "wasi:cli/environment",
          "wasi:cli/exit",
          "wasi:cli/stdin",
          "wasi:cli/stdout",
          "wasi:cli/stderr",
          "wasi:cli/terminal-input",
          "wasi:cli/terminal-output",
          "wasi:cli/terminal-stdin",
          "wasi:cli/terminal-stdout",
          "wasi:cli/terminal-stderr",
          "wasi:io/error",
          "wasi:io/poll",
          "wasi:io/streams",
          "wasi:clocks/monotonic-clock",
          "wasi:clocks/wall-clock",
          "wasi:random/random",
          "wasi:random/insecure",
          "wasi:random/insecure-seed",
          "wasi:filesystem/types",
          "wasi:filesystem/preopens");

  private static final Pattern NAME =
      Pattern.compile("([a-z][a-z0-9-]*:[a-z][a-z0-9-]*/[a-z][a-z0-9-]*)@0\\.2\\.(\\d+)(-[^@]*)?");

  /** The unversioned interface when {@code importName} is served, empty when it is not. */
  public static Optional<String> served(String importName) {
    Matcher m = NAME.matcher(importName);
    if (!m.matches() || m.group(3) != null || !SERVED.contains(m.group(1))) {
      return Optional.empty();
    }
    return Optional.of(m.group(1));
  }

  /** What a driver is granted through an import: always {@code empty} for a served one. */
  public static String grant(String importName) {
    return served(importName).isPresent() ? "empty" : "refused";
  }
}
