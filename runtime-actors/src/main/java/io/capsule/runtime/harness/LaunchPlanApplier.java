package io.capsule.runtime.harness;

import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Applies a driver's launch plan (docs/run-semantics.md §4): validates it, writes its files into a
 * fresh private directory and computes the harness's exact argument list and environment. No
 * threads; the file writes are the only I/O, so the run calls it on its blocking dispatcher.
 *
 * <p>Validation happens before anything touches the disk, so a refused plan leaves nothing behind.
 * Refusals ({@link LaunchPlanRefused}, {@code E-RUN-034}) name the file or variable, never a value:
 *
 * <ul>
 *   <li>a file name that is empty, {@code .}, {@code ..}, or contains {@code /} or NUL, or that
 *       occurs twice (the second would silently replace the first);
 *   <li>an {@code env-set} name that is empty or contains {@code =} or NUL;
 *   <li>NUL in an argument or an environment value (the OS cannot pass it; reported here rather
 *       than as a spawn failure so the driver is blamed, not the harness).
 * </ul>
 */
public final class LaunchPlanApplier {

  /** The placeholder drivers put in args and env values for the files directory's path. */
  public static final String FILES_DIR_PLACEHOLDER = "{files_dir}";

  private static final Set<PosixFilePermission> OWNER_ONLY_DIR =
      PosixFilePermissions.fromString("rwx------");
  private static final Set<PosixFilePermission> OWNER_ONLY_FILE =
      PosixFilePermissions.fromString("rw-------");

  private LaunchPlanApplier() {}

  /**
   * Applies the plan.
   *
   * @param plan what the driver's {@code launch} returned
   * @param binary the resolved harness binary
   * @param workdir the run's working directory for the harness
   * @param runDir the run's directory; the files directory is created inside it
   * @param envAllow the names of {@code capabilities.env.allow}
   * @param hostEnv the host's environment (usually {@code System.getenv()})
   * @throws LaunchPlanRefused for an unusable plan ({@code E-RUN-034})
   * @throws IOException when the directory or a file cannot be written
   */
  public static AppliedLaunch apply(
      LaunchPlan plan,
      Path binary,
      Path workdir,
      Path runDir,
      List<String> envAllow,
      Map<String, String> hostEnv)
      throws IOException {
    return apply(plan, binary, workdir, runDir, envAllow, hostEnv, HarnessGrants.NONE);
  }

  /**
   * {@link #apply(LaunchPlan, Path, Path, Path, List, Map)} with the manifest's grants, which a
   * contained harness gets (see {@code harness.contain}).
   */
  public static AppliedLaunch apply(
      LaunchPlan plan,
      Path binary,
      Path workdir,
      Path runDir,
      List<String> envAllow,
      Map<String, String> hostEnv,
      HarnessGrants grants)
      throws IOException {
    validate(plan);
    Path filesDir =
        Files.createTempDirectory(
                runDir, "files-", PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIR))
            .toAbsolutePath();
    try {
      List<String> names = new ArrayList<>();
      for (DriverFile file : plan.files()) {
        Files.write(
            filesDir.resolve(file.name()),
            file.contents().getBytes(StandardCharsets.UTF_8),
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE);
        Files.setPosixFilePermissions(filesDir.resolve(file.name()), OWNER_ONLY_FILE);
        names.add(file.name());
      }
      String dir = filesDir.toString();
      List<String> args = plan.args().stream().map(a -> substitute(a, dir)).toList();
      Map<String, String> env = new LinkedHashMap<>();
      for (String name : envAllow) {
        String value = hostEnv.get(name);
        if (value != null) {
          env.put(name, value);
        }
      }
      for (EnvVar var : plan.envSet()) {
        env.put(var.name(), substitute(var.value(), dir));
      }
      return new AppliedLaunch(
          binary,
          args,
          env,
          workdir,
          filesDir,
          names,
          plan.stdin().orElse(new byte[0]),
          plan.keepStdinOpen(),
          plan.interruptStdin(),
          grants);
    } catch (IOException | RuntimeException e) {
      AppliedLaunch.deleteTree(filesDir);
      throw e;
    }
  }

  static void validate(LaunchPlan plan) {
    Set<String> seen = new HashSet<>();
    for (DriverFile file : plan.files()) {
      String name = file.name();
      if (name.isEmpty()
          || name.equals(".")
          || name.equals("..")
          || name.indexOf('/') >= 0
          || name.indexOf('\0') >= 0) {
        throw new LaunchPlanRefused("file name '" + printable(name) + "' is not a plain name");
      }
      if (!seen.add(name)) {
        throw new LaunchPlanRefused("file name '" + name + "' occurs twice");
      }
    }
    for (EnvVar var : plan.envSet()) {
      String name = var.name();
      if (name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
        throw new LaunchPlanRefused(
            "env-set name '" + printable(name) + "' is empty or contains '=' or NUL");
      }
      if (var.value().indexOf('\0') >= 0) {
        throw new LaunchPlanRefused("the value of env-set " + name + " contains NUL");
      }
    }
    for (int i = 0; i < plan.args().size(); i++) {
      if (plan.args().get(i).indexOf('\0') >= 0) {
        throw new LaunchPlanRefused("argument " + (i + 1) + " contains NUL");
      }
    }
  }

  private static String substitute(String value, String filesDir) {
    return value.replace(FILES_DIR_PLACEHOLDER, filesDir);
  }

  private static String printable(String name) {
    return name.replace("\0", "\\0");
  }
}
