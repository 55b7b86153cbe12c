package io.capsule.driver.load;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.HarnessPath;
import io.capsule.config.manifest.NetworkEntry;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.PathNeed;
import io.capsule.driver.wasm.DriverException;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether a driver described itself usably (docs/run-semantics.md §1.3): {@code binary} non-empty;
 * each {@code required-env} name non-empty and free of {@code =} and NUL; a {@code
 * login-check.command} with at least one argument; every {@code harness-needs} path {@code
 * ~/<rest>} or absolute (and written plainly, as {@link HarnessPath} requires of manifest paths);
 * every host a valid {@code capabilities.network.allow} entry. Pure and thread-safe.
 */
public final class DescriptionChecks {
  private DescriptionChecks() {}

  /** Every problem, in field order; empty when the description is usable. */
  public static List<String> problems(Description d) {
    List<String> out = new ArrayList<>();
    if (d.binary().isEmpty()) {
      out.add("binary is empty");
    } else if (d.binary().indexOf('\0') >= 0) {
      out.add("binary contains NUL");
    }
    for (String name : d.requiredEnv()) {
      if (name.isEmpty()) {
        out.add("a required-env name is empty");
      } else if (name.indexOf('=') >= 0) {
        out.add("required-env name '" + name + "' contains '='");
      } else if (name.indexOf('\0') >= 0) {
        out.add("a required-env name contains NUL");
      }
    }
    if (d.loginCheck() instanceof LoginCheck.Command c && c.args().isEmpty()) {
      out.add("login-check.command has no arguments (the bare binary may start a session)");
    }
    for (PathNeed need : d.harnessNeeds().paths()) {
      try {
        HarnessPath.normalize(need.path());
      } catch (IllegalArgumentException e) {
        out.add("harness-needs path: " + e.getMessage());
      }
    }
    for (String host : d.harnessNeeds().hosts()) {
      if (host.contains("://")) {
        // A manifest may write https://host; the driver contract names hosts bare (host[:port]).
        out.add(
            "harness-needs host '"
                + host
                + "': a host[:port], not a URL (drop the "
                + host.substring(0, host.indexOf("://") + 3)
                + ")");
        continue;
      }
      try {
        NetworkEntry.parse(host);
      } catch (IllegalArgumentException e) {
        out.add("harness-needs host '" + host + "': " + e.getMessage());
      }
    }
    return out;
  }

  /** Throws {@code E-RUN-032} listing every problem, when there is one. */
  public static void check(Description d, String driver) {
    List<String> problems = problems(d);
    if (!problems.isEmpty()) {
      throw new DriverException(
          Diagnostic.of(
                  Code.E_RUN_032,
                  "the driver described itself unusably: " + String.join("; ", problems))
              .with("driver", driver));
    }
  }
}
