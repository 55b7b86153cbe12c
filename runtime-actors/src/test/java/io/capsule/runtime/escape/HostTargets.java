package io.capsule.runtime.escape;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.URL;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * What the host sets up for the escape suite (docs/containment.md "Escape suite") to be reached
 * from a sandbox: a directory no grant names with a secret in it, a loopback TCP listener, a Unix
 * socket under {@code /run}, an abstract socket, a file in the host's {@code /dev/shm} and a
 * process. Everything is removed by {@link #close}. Needs root for {@code /run} (the suite runs as
 * root in CI).
 */
public final class HostTargets implements AutoCloseable {

  /** Every case the hostile script tries that must hold whatever the limits. */
  public static final Set<String> ALWAYS =
      Set.of(
          "write-host-dir",
          "read-host-secret",
          "host-dir-absent",
          "write-system",
          "remount-root",
          "remount-usr",
          "mount-tmpfs",
          "mknod-block",
          "mknod-char",
          "new-user-namespace",
          "new-mount-namespace",
          "sysctl-write",
          "loopback-direct",
          "proxy-connect-other-loopback",
          "unix-socket-path",
          "unix-socket-connect",
          "abstract-socket",
          "dev-shm-shared",
          "signal-host-process",
          "tty-inject",
          "netlink-socket",
          "syscall-filter",
          "absent:/run",
          "absent:/var",
          "absent:/srv",
          "absent:/mnt",
          "absent:/media",
          "absent:/opt",
          "absent:/boot",
          "absent:/sys",
          "absent:/etc/shadow",
          "absent:/etc/gshadow",
          "absent:/etc/ssh",
          "absent:/etc/sudoers",
          "no-capabilities",
          "own-user-namespace",
          "no-new-privs");

  private final String tag =
      "capsule-escape-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  private final Path hostDir;
  private final ServerSocket listener;
  private final Path unixSocket;
  private final ServerSocketChannel unixListener;
  private final Process abstractListener;
  private final Path shmFile;
  private final Process hostProcess;

  public HostTargets() throws IOException {
    hostDir = Files.createTempDirectory(Path.of("/var/tmp"), "capsule-escape-");
    Files.writeString(hostDir.resolve("secret.txt"), "host secret\n");
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    unixSocket = Path.of("/run", tag + ".sock");
    unixListener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    unixListener.bind(UnixDomainSocketAddress.of(unixSocket));
    abstractListener =
        new ProcessBuilder("/usr/bin/socat", "ABSTRACT-LISTEN:" + tag + ",fork", "EXEC:/bin/true")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    shmFile = Path.of("/dev/shm", tag);
    Files.writeString(shmFile, "host shm\n");
    hostProcess =
        new ProcessBuilder("/bin/sleep", "600")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
  }

  /** The hostile script's arguments, without the optional limit checks. */
  public List<String> args() {
    return args(0, 0);
  }

  /** The hostile script's arguments; {@code fileSizeMib}, {@code openFiles} 0 skip those cases. */
  public List<String> args(int fileSizeMib, int openFiles) {
    return List.of(
        hostDir.toString(),
        Integer.toString(listener.getLocalPort()),
        unixSocket.toString(),
        tag,
        shmFile.getFileName().toString(),
        Long.toString(hostProcess.pid()),
        Integer.toString(fileSizeMib),
        Integer.toString(openFiles));
  }

  /** Copies the hostile script into {@code dir} (a folder the sandbox shows) and returns it. */
  public static Path installScript(Path dir) throws IOException {
    URL url = HostTargets.class.getResource("/escape/hostile.sh");
    Path target = dir.resolve(".hostile.sh");
    try (InputStream in = url.openStream()) {
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
    }
    return target;
  }

  /**
   * Asserts the script's output: it finished, every case in {@code expected} held, and nothing
   * escaped; also that the host is as it was (no file written into the host directory).
   */
  public void assertAllHeld(String output, Set<String> expected) throws IOException {
    Set<String> held = new TreeSet<>();
    List<String> escaped = new ArrayList<>();
    for (String line : output.split("\n")) {
      if (line.startsWith("HELD ")) {
        held.add(line.substring(5).strip());
      } else if (line.startsWith("ESCAPED ")) {
        escaped.add(line.substring(8).strip());
      }
    }
    assertEquals(List.of(), escaped, "escapes that got through:\n" + output);
    assertTrue(output.contains("DONE"), "the hostile script did not finish:\n" + output);
    assertEquals(new TreeSet<>(expected), held, "cases that held:\n" + output);
    assertTrue(Files.notExists(hostDir.resolve("pwned")), "a file was written on the host");
    assertTrue(Files.notExists(Path.of("/usr/capsule-pwned")), "a file was written under /usr");
  }

  @Override
  public void close() throws IOException {
    hostProcess.destroyForcibly();
    abstractListener.destroyForcibly();
    try {
      hostProcess.waitFor(5, TimeUnit.SECONDS);
      abstractListener.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    listener.close();
    unixListener.close();
    Files.deleteIfExists(unixSocket);
    Files.deleteIfExists(shmFile);
    try (var files = Files.walk(hostDir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
