package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What {@code capsule doctor} runs to show that containment really works for a capsule: an egress
 * proxy with the capsule's grants and a sandbox with its mounts, where a tiny client asks the proxy
 * (through the forwarder) for a host no manifest can grant and must get the proxy's 403. Blocking
 * and bounded: for the command line, never an actor.
 */
public final class SandboxCheck {

  /** Bound on the whole check: a sandbox start and one loopback round trip. */
  static final Duration BOUND = Duration.ofSeconds(15);

  /** A host that cannot be in an allowlist ({@code .invalid} is reserved, RFC 2606). */
  static final String PROBE_HOST = "capsule-doctor.invalid";

  private SandboxCheck() {}

  /** Empty when the proxy answered from inside the sandbox; else what failed. */
  public static Optional<String> run(ContainmentConfig config, HarnessGrants grants, Path workdir)
      throws IOException {
    Path filesDir = Files.createTempDirectory("capsule-doctor-files-");
    try (EgressProxy proxy =
        EgressProxy.start(new EgressPolicy(grants.egress()), config, (h, p, r, n) -> {})) {
      String client =
          "printf 'CONNECT "
              + PROBE_HOST
              + ":443 HTTP/1.1\\r\\n\\r\\n' | "
              + config.socat()
              + " -t 5 - TCP:127.0.0.1:"
              + SandboxCommand.PROXY_PORT;
      List<String> argv =
          SandboxCommand.argv(
              new SandboxCommand.Inputs(
                  Installations.SETSID,
                  config.bwrap(),
                  config.socat(),
                  grants,
                  workdir,
                  filesDir,
                  List.of(),
                  proxy.socket(),
                  List.of("/bin/sh", "-c", client),
                  SandboxCommand.Hardening.forThisMachine()));
      Process p =
          new ProcessBuilder(argv).directory(workdir.toFile()).redirectErrorStream(true).start();
      try {
        p.getOutputStream().close();
        if (!p.waitFor(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
          return Optional.of("the sandbox did not finish within " + BOUND);
        }
        String out = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8);
        if (out.contains("403 Forbidden") && proxy.refusedCount() == 1) {
          return Optional.empty();
        }
        return Optional.of(
            "the proxy did not answer from inside the sandbox (exit "
                + p.exitValue()
                + "): "
                + out.strip());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Optional.of("interrupted");
      } finally {
        p.destroyForcibly();
        p.getInputStream().close();
      }
    } finally {
      Files.deleteIfExists(filesDir);
    }
  }
}
