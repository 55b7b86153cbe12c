package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code --die-with-parent} follows the thread that forked bubblewrap: a sandbox started from a
 * pool thread dies when that thread retires. Real bubblewrap (CI installs it).
 */
@Timeout(60)
class SandboxLauncherTest {

  /** A sandbox that says it started, then waits for one stdin line and answers it. */
  private static ProcessBuilder sandbox() {
    return new ProcessBuilder(
        List.of(
            "/usr/bin/bwrap",
            "--die-with-parent",
            "--unshare-pid",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--",
            "/bin/sh",
            "-c",
            "echo started; read -r line; echo \"survived $line\""));
  }

  /** The next line of {@code p}'s stdout (the reader is not closed: the stream stays open). */
  private static String firstLine(Process p) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = p.getInputStream().read(); c >= 0 && c != '\n'; c = p.getInputStream().read()) {
      line.append((char) c);
    }
    return line.toString();
  }

  @Test
  void aSandboxOutlivesTheThreadThatAskedForIt() throws Exception {
    AtomicReference<Process> direct = new AtomicReference<>();
    AtomicReference<Process> launched = new AtomicReference<>();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread pooled =
        new Thread(
            () -> {
              try {
                direct.set(sandbox().start());
                launched.set(SandboxLauncher.start(sandbox()));
                // Both have set their parent-death signal before this thread ends.
                firstLine(direct.get());
                firstLine(launched.get());
              } catch (IOException e) {
                failed.set(e);
              }
            });
    pooled.start();
    pooled.join(30_000);
    assertFalse(pooled.isAlive());
    assertEquals(null, failed.get());

    // The one that thread forked itself got SIGKILL when the thread ended (128 + 9)...
    assertTrue(direct.get().waitFor(30, TimeUnit.SECONDS), "killed with its thread");
    assertEquals(137, direct.get().exitValue());
    // ...by which time the other would have too, had it been forked there: it still answers.
    Process p = launched.get();
    p.getOutputStream().write("ok\n".getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    assertEquals("survived ok", firstLine(p));
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue());
  }

  @Test
  void aFailedStartIsTheCallersIoException() {
    IOException e =
        assertThrows(
            IOException.class,
            () -> SandboxLauncher.start(new ProcessBuilder("/nonexistent/capsule-bwrap")));
    assertTrue(e.getMessage().contains("/nonexistent/capsule-bwrap"), e.getMessage());
  }
}
