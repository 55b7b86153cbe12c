package io.capsule.runtime.bridge;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The argv that starts one tool: pure, so the exact command line is table-tested.
 *
 * <p>Every tool starts through {@code setsid}, so it leads a fresh session and process group whose
 * id is its pid: killing that group kills everything it started that did not leave the group on
 * purpose. When the Java child is not a group leader (it never is), {@code setsid} does not fork,
 * so the pid the JVM sees is the group id.
 *
 * <p>With {@code filesystem.read_only}, the tool additionally starts inside a private mount
 * namespace ({@code unshare --mount}, plus {@code --map-root-user} when the JVM is not root) where
 * the workdir is bind-mounted onto itself read-only by a fixed {@code /bin/sh} script; the script
 * then enters the read-only view, checks that it is really not writable, and {@code exec}s the tool
 * with its arguments as positional parameters ({@code "$@"}), so no argument is ever shell syntax.
 * If any step fails it exits {@value #SETUP_FAILED} without running the tool.
 */
final class ToolCommand {

  /** Exit code of the read-only prelude when it could not make the workdir read-only. */
  static final int SETUP_FAILED = 125;

  static final String SETUP_FAILED_MESSAGE = "capsule bridge: cannot make the workdir read-only";

  static final Path SETSID = system("setsid");
  static final Path UNSHARE = system("unshare");
  static final Path MOUNT = system("mount");
  static final Path TRUE = system("true");
  static final Path SH = Path.of("/bin/sh");

  private ToolCommand() {}

  /**
   * The argv for {@code binary args…}.
   *
   * @param readOnlyWorkdir the workdir to mount read-only, or empty to run without the mount
   * @param asRoot whether the JVM runs as uid 0 (then no user namespace is needed to mount)
   */
  static List<String> argv(
      Path binary, List<String> args, Optional<Path> readOnlyWorkdir, boolean asRoot) {
    List<String> argv = new ArrayList<>();
    argv.add(SETSID.toString());
    readOnlyWorkdir.ifPresent(
        workdir -> {
          argv.add(UNSHARE.toString());
          argv.add("--mount");
          if (!asRoot) {
            argv.add("--map-root-user");
          }
          argv.add("--");
          argv.add(SH.toString());
          argv.add("-c");
          argv.add(readOnlyScript());
          argv.add(workdir.toString());
        });
    argv.add(binary.toString());
    argv.addAll(args);
    return List.copyOf(argv);
  }

  /**
   * {@code $0} is the workdir, {@code "$@"} the tool and its arguments. {@code test -w} on the
   * mounted directory fails with EROFS even for root, so a mount that silently did not take effect
   * is caught here rather than trusted.
   */
  static String readOnlyScript() {
    return MOUNT
        + " --bind -o ro \"$0\" \"$0\" 2>/dev/null && cd \"$0\" && ! test -w . || { echo '"
        + SETUP_FAILED_MESSAGE
        + "' >&2; exit "
        + SETUP_FAILED
        + "; }; exec \"$@\"";
  }

  /** The argv that tells whether the read-only mount works here: the prelude, then {@code true}. */
  static List<String> readOnlyProbe(Path workdir, boolean asRoot) {
    return argv(TRUE, List.of(), Optional.of(workdir), asRoot);
  }

  /** A system utility, taken from the system's directories and never from the granted PATH. */
  private static Path system(String name) {
    for (String dir : List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin")) {
      Path p = Path.of(dir, name);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return Path.of("/usr/bin", name);
  }
}
