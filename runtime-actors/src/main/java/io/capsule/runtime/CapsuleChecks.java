package io.capsule.runtime;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.manifest.Access;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.NetworkEntry;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.PathNeed;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The per-capsule checks of a driver against its manifest (run-semantics §1.4), for drivers that
 * did not come through the WASM loader (a Java driver registered in memory). Blocking (it looks at
 * files); call it off actor threads. Every refusal is collected and thrown at once.
 */
final class CapsuleChecks {

  private CapsuleChecks() {}

  /** Checks and returns the resolved harness binary; throws with every problem found. */
  static Path check(Manifest m, Description d, Map<String, String> hostEnv) {
    List<Diagnostic> problems = new ArrayList<>();
    List<String> granted = m.capabilities().env().granted();
    Set<String> missing = new LinkedHashSet<>();
    for (String name : d.requiredEnv()) {
      if (!granted.contains(name)) {
        missing.add(name);
      }
    }
    if (!missing.isEmpty()) {
      problems.add(
          Diagnostic.of(
              Code.E_CAP_019,
              "the driver requires env names that capabilities.env.allow does not grant: "
                  + String.join(", ", missing)));
    }
    if (!d.reportsUsage() && m.inference().maxSessionTokens().isPresent()) {
      problems.add(
          Diagnostic.of(
              Code.E_RUN_038,
              "inference.max_session_tokens is set but the driver reports no usage"));
    }
    for (PathNeed need : d.harnessNeeds().paths()) {
      Access access = need.access() == PathAccess.READ_WRITE ? Access.READ_WRITE : Access.READ;
      if (!m.capabilities().harness().allows(need.path(), access)) {
        problems.add(
            Diagnostic.of(
                Code.E_CAP_021,
                "the harness needs "
                    + need.path()
                    + " ("
                    + access.yaml()
                    + ") and it is not allowed"));
      }
    }
    for (String host : d.harnessNeeds().hosts()) {
      boolean allowed;
      try {
        allowed = m.capabilities().network().allows(NetworkEntry.parse(host));
      } catch (IllegalArgumentException e) {
        allowed = false;
      }
      if (!allowed) {
        problems.add(
            Diagnostic.of(
                Code.E_CAP_021, "the harness needs host " + host + " and it is not allowed"));
      }
    }
    String wanted = m.resolvedCommand().orElse(d.binary());
    Optional<Path> binary =
        resolveBinary(wanted, granted.contains("PATH") ? hostEnv.get("PATH") : null);
    if (binary.isEmpty()) {
      problems.add(
          Diagnostic.of(Code.E_RUN_006, "the harness binary '" + wanted + "' was not found"));
    }
    if (!problems.isEmpty()) {
      throw new DiagnosticException(problems, null);
    }
    return binary.get();
  }

  /**
   * A value with {@code /} is a path and must be an executable file; a bare name is looked up on
   * the PATH the capsule's env grants (none granted: not found).
   */
  static Optional<Path> resolveBinary(String wanted, String path) {
    if (wanted.contains("/")) {
      Path p = Path.of(wanted).toAbsolutePath();
      return Files.isRegularFile(p) && Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
    }
    if (path == null || wanted.isEmpty()) {
      return Optional.empty();
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path p = Path.of(dir, wanted).toAbsolutePath();
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
