package io.capsule.runtime.harness;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starting a process in its own process group and ending the whole group. Blocking (fork/exec,
 * signals): call on a blocking dispatcher.
 */
final class HarnessSpawn {

  private HarnessSpawn() {}

  /**
   * Starts {@code binary args} through {@code setsid(1)}, so it leads a new session and process
   * group whose id is its pid ({@code setsid} forks only when already a group leader, which a child
   * of the JVM never is). The environment is exactly {@code env}; all three streams are piped.
   */
  static Process start(Path binary, List<String> args, Map<String, String> env, Path workdir)
      throws IOException {
    if (!Files.isExecutable(ProcessGroup.SETSID)) {
      throw new IOException("setsid(1) is missing at " + ProcessGroup.SETSID);
    }
    Path resolved = workdir.resolve(binary);
    if (!Files.isRegularFile(resolved) || !Files.isExecutable(resolved)) {
      throw new IOException(resolved + " is not an executable file");
    }
    List<String> command = new ArrayList<>(args.size() + 2);
    command.add(ProcessGroup.SETSID.toString());
    command.add(resolved.toString());
    command.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(command).directory(workdir.toFile());
    builder.environment().clear();
    builder.environment().putAll(env);
    return builder.start();
  }

  /** SIGKILL to the whole group, then the pipes closed (a blocked writer is released by then). */
  static void killAndClose(Process leader) {
    ProcessGroup.killAll(leader.pid(), leader.toHandle());
    closeQuietly(leader.getOutputStream());
    closeQuietly(leader.getInputStream());
    closeQuietly(leader.getErrorStream());
  }

  private static void closeQuietly(Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException e) {
      // The process is gone; nothing is left to flush.
    }
  }
}
