package io.capsule.driver.load;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.Access;
import io.capsule.config.manifest.Capabilities;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.NetworkEntry;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.PathNeed;
import io.capsule.driver.wasm.DriverException;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A loaded driver against one capsule's manifest (docs/run-semantics.md §1.4), in the spec's order;
 * the first check that fails refuses the capsule:
 *
 * <ol>
 *   <li>every {@code required-env} name is granted by {@code capabilities.env} — else {@code
 *       E-CAP-019} listing every missing name once, in the driver's order;
 *   <li>a driver with {@code reports-usage: false} meets no token ceiling ({@code
 *       inference.max_session_tokens} or the machine's) — else {@code E-RUN-038};
 *   <li>the harness binary resolves: {@code inference.command} wins over {@code
 *       description.binary}; a value with {@code /} is a path (relative ones against the capsule
 *       directory) and must be an executable file; a bare name is looked up on the {@code PATH} the
 *       capsule's env grants (the host's value, only when {@code PATH} is granted) — else {@code
 *       E-RUN-006};
 *   <li>every path need is allowed by {@code capabilities.harness.paths} at its access or wider,
 *       every host need by {@code capabilities.network.allow} — else {@code E-CAP-021} naming each
 *       need not covered.
 * </ol>
 *
 * <p>Reads the file system (binary resolution) but keeps no state; thread-safe.
 */
public final class ManifestChecks {
  private ManifestChecks() {}

  /**
   * Runs the checks and returns the grant.
   *
   * @param hostEnv the runtime's environment (only values of granted names are used: {@code PATH})
   * @param machineTokenCeiling whether a machine-wide token ceiling is in effect
   */
  public static DriverGrant check(
      Description d, Manifest manifest, Map<String, String> hostEnv, boolean machineTokenCeiling) {
    String driver = manifest.inference().driver().artifact();
    Capabilities caps = manifest.capabilities();

    List<String> granted = caps.env().granted();
    LinkedHashSet<String> missing = new LinkedHashSet<>();
    for (String name : d.requiredEnv()) {
      if (!granted.contains(name)) {
        missing.add(name);
      }
    }
    if (!missing.isEmpty()) {
      throw refuse(
          Code.E_CAP_019,
          "the driver requires "
              + String.join(", ", missing)
              + ", which capabilities.env.allow does not grant",
          driver);
    }

    boolean ceiling = manifest.inference().maxSessionTokens().isPresent() || machineTokenCeiling;
    if (!d.reportsUsage() && ceiling) {
      throw refuse(
          Code.E_RUN_038,
          "the driver reports no usage, so "
              + (manifest.inference().maxSessionTokens().isPresent()
                  ? "inference.max_session_tokens"
                  : "the machine's token ceiling")
              + " could never be reached",
          driver);
    }

    Path binary = resolveBinary(d, manifest, hostEnv, driver);

    List<String> uncovered = new ArrayList<>();
    for (PathNeed need : d.harnessNeeds().paths()) {
      if (!caps.harness().allows(need.path(), access(need.access()))) {
        uncovered.add("path " + need.path() + " (" + need.access().witName() + ")");
      }
    }
    List<NetworkEntry> hosts = new ArrayList<>();
    for (String host : d.harnessNeeds().hosts()) {
      NetworkEntry entry = NetworkEntry.parse(host);
      hosts.add(entry);
      if (!caps.network().allows(entry)) {
        uncovered.add("host " + entry);
      }
    }
    if (!uncovered.isEmpty()) {
      throw refuse(
          Code.E_CAP_021,
          "the manifest does not allow what the harness needs: " + String.join(", ", uncovered),
          driver);
    }
    return new DriverGrant(binary, d.requiredEnv(), d.harnessNeeds().paths(), hosts);
  }

  static Access access(PathAccess a) {
    return a == PathAccess.READ_WRITE ? Access.READ_WRITE : Access.READ;
  }

  private static Path resolveBinary(
      Description d, Manifest manifest, Map<String, String> hostEnv, String driver) {
    Optional<String> command = manifest.resolvedCommand();
    String value = command.orElse(d.binary());
    String source = command.isPresent() ? "inference.command" : "the driver's binary";
    if (value.contains("/")) {
      Path path;
      try {
        path = manifest.capsuleDir().resolve(value).normalize();
      } catch (InvalidPathException e) {
        throw refuse(Code.E_RUN_006, source + " '" + value + "' is not a valid path", driver);
      }
      if (Files.isRegularFile(path) && !Files.isExecutable(path)) {
        throw new DriverException(
            Diagnostic.of(
                    Code.E_RUN_006,
                    "the harness binary " + path + " (" + source + ") is not executable")
                .with("driver", driver)
                .withHint("make it executable: chmod +x " + path));
      }
      if (!Files.isRegularFile(path)) {
        throw new DriverException(
            Diagnostic.of(
                    Code.E_RUN_006,
                    "the harness binary " + path + " (" + source + ") does not exist")
                .with("driver", driver)
                .withHint("check " + source + ", or install the harness there"));
      }
      return path.toAbsolutePath();
    }
    if (!manifest.capabilities().env().granted().contains("PATH")) {
      throw refuse(
          Code.E_RUN_006,
          "the harness binary '"
              + value
              + "' ("
              + source
              + ") is a bare name, but the capsule's env grants no PATH to look it up on"
              + " (allow PATH, or give inference.command as a path)",
          driver);
    }
    String searchPath = hostEnv.getOrDefault("PATH", "");
    for (String dir : searchPath.split(File.pathSeparator, -1)) {
      if (dir.isEmpty()) {
        continue; // an empty entry means the working directory, which is not a grant
      }
      try {
        Path candidate = Path.of(dir).resolve(value);
        if (candidate.isAbsolute()
            && Files.isRegularFile(candidate)
            && Files.isExecutable(candidate)) {
          return candidate;
        }
      } catch (InvalidPathException e) {
        // a PATH entry that is not a path holds nothing
      }
    }
    throw refuse(
        Code.E_RUN_006,
        "the harness binary '" + value + "' (" + source + ") is not on the granted PATH",
        driver);
  }

  private static DriverException refuse(Code code, String message, String driver) {
    return new DriverException(Diagnostic.of(code, message).with("driver", driver));
  }
}
