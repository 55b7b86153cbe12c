package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.Access;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class SandboxCommandTest {

  private static final Path HOME = Path.of("/home/u");

  private static SandboxCommand.Inputs inputs(HarnessGrants grants, List<Path> installation) {
    return new SandboxCommand.Inputs(
        Path.of("/usr/bin/setsid"),
        Path.of("/usr/bin/bwrap"),
        Path.of("/usr/bin/socat"),
        grants,
        Path.of("/home/u/project"),
        Path.of("/tmp/capsule-runs/t1/files-1"),
        installation,
        Path.of("/tmp/capsule-egress-1/proxy.sock"),
        List.of("/home/u/.local/bin/claude", "-p", "--verbose"));
  }

  private static List<String> mounts(HarnessGrants grants, List<Path> installation) {
    return SandboxCommand.mounts(inputs(grants, installation)).stream()
        .map(m -> m.op() + " " + m.target())
        .toList();
  }

  @Test
  void mountsGoShallowestFirstSoNoBindIsCovered() {
    HarnessGrants grants =
        new HarnessGrants(
            List.of(),
            List.of(
                new HarnessGrants.PathGrant(Path.of("/home/u/.claude"), Access.READ_WRITE),
                new HarnessGrants.PathGrant(Path.of("/srv/data"), Access.READ)),
            false,
            HOME);
    assertEquals(
        List.of(
            "--tmpfs /tmp",
            "--tmpfs /home/u",
            "--ro-bind-try /srv/data",
            "--bind /tmp/.capsule-egress.sock",
            "--ro-bind-try /home/u/.local",
            "--bind-try /home/u/.claude",
            "--bind /home/u/project",
            "--bind /tmp/capsule-runs/t1/files-1"),
        mounts(grants, List.of(Path.of("/home/u/.local"), Path.of("/usr/lib/node"))));
  }

  @Test
  void readOnlyBindsTheRunsDirectoriesReadOnly() {
    List<String> m = mounts(new HarnessGrants(List.of(), List.of(), true, HOME), List.of());
    assertTrue(m.contains("--ro-bind /home/u/project"), m.toString());
    assertTrue(m.contains("--ro-bind /tmp/capsule-runs/t1/files-1"), m.toString());
  }

  @Test
  void theOutsideIgnoresSigintAndTheHarnessGetsItBackInside() {
    List<String> argv =
        SandboxCommand.argv(
            inputs(new HarnessGrants(List.of(), List.of(), false, HOME), List.of()));
    assertEquals(
        List.of("/usr/bin/setsid", "/usr/bin/env", "--ignore-signal=INT", "/usr/bin/bwrap"),
        argv.subList(0, 4));
    for (String flag :
        List.of(
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent")) {
      assertTrue(argv.contains(flag), flag);
    }
    int dashes = argv.indexOf("--");
    assertEquals(
        List.of(
            "/usr/bin/env", "--default-signal=INT", "/home/u/.local/bin/claude", "-p", "--verbose"),
        argv.subList(dashes + 5, argv.size()));
    assertEquals("/home/u/project", argv.get(argv.indexOf("--chdir") + 1));
  }

  @Test
  void theInstallationIsTheBinarysPrefix() {
    assertEquals(
        List.of(Path.of("/home/u/.local"), Path.of("/home/u/.local/share/claude/versions")),
        SandboxCommand.installation(
            Path.of("/home/u/.local/bin/claude"),
            Path.of("/home/u/.local/share/claude/versions/2.0")));
    assertEquals(
        List.of(Path.of("/opt/h")),
        SandboxCommand.installation(Path.of("/opt/h/run"), Path.of("/opt/h/run")));
    // An npm CLI loads sibling packages: the whole node_modules tree is its installation.
    assertEquals(
        List.of(Path.of("/tmp/c/real-harness/node_modules")),
        SandboxCommand.installation(
            Path.of("/tmp/c/real-harness/node_modules/.bin/gemini"),
            Path.of(
                "/tmp/c/real-harness/node_modules/@google/gemini-cli/node_modules/x/dist/i.js")));
  }

  @Test
  void theProxyEnvironmentClearsNoProxy() {
    assertEquals("", SandboxCommand.proxyEnv().get("NO_PROXY"));
    assertEquals("http://127.0.0.1:3128", SandboxCommand.proxyEnv().get("HTTPS_PROXY"));
  }
}
