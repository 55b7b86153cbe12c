package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.Access;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SandboxCommandTest {

  private static final Path HOME = Path.of("/home/u");

  /** A merged-/usr host with a few /etc entries, one of them a secret. */
  static final HostView HOST =
      HostView.of(
          Map.of(
              Path.of("/bin"), Path.of("usr/bin"),
              Path.of("/lib"), Path.of("usr/lib"),
              Path.of("/lib64"), Path.of("usr/lib64"),
              Path.of("/sbin"), Path.of("usr/sbin")),
          Set.of(
              Path.of("/usr"),
              Path.of("/etc/passwd"),
              Path.of("/etc/shadow"),
              Path.of("/etc/ssl"),
              Path.of("/etc/ssh"),
              Path.of("/etc/resolv.conf")));

  static final SandboxCommand.Hardening HARDENING =
      new SandboxCommand.Hardening(
          Optional.of(SandboxCommand.Hardening.SANDBOX_USER),
          Optional.of(Path.of("/run/capsule/seccomp.bpf")),
          List.of(Path.of("/sys/fs/cgroup/pids/capsule/r1/cgroup.procs")),
          List.of("/usr/bin/prlimit", "--nofile=4096", "--"),
          HOST);

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
        List.of("/home/u/.local/bin/claude", "-p", "--verbose"),
        HARDENING);
  }

  private static List<String> mounts(HarnessGrants grants, List<Path> installation) {
    return SandboxCommand.mounts(inputs(grants, installation)).stream()
        .filter(m -> !SealedRoot.mounts(HOST).contains(m))
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
  void theOutsidePreludeJoinsTheCgroupsOpensTheFilterAndIgnoresSigint() {
    List<String> argv =
        SandboxCommand.argv(
            inputs(new HarnessGrants(List.of(), List.of(), false, HOME), List.of()));
    assertEquals(
        List.of(
            "/usr/bin/setsid",
            "/bin/sh",
            "-c",
            SandboxCommand.PRELUDE,
            "capsule-prelude",
            "/run/capsule/seccomp.bpf",
            "1",
            "/sys/fs/cgroup/pids/capsule/r1/cgroup.procs",
            "/usr/bin/prlimit",
            "--nofile=4096",
            "--",
            "/usr/bin/bwrap"),
        argv.subList(0, 12));
    assertTrue(SandboxCommand.PRELUDE.startsWith("trap '' INT\n"), SandboxCommand.PRELUDE);
    int dashes = argv.indexOf("--chdir") + 2;
    assertEquals("--", argv.get(dashes));
    assertEquals(
        List.of(
            "/usr/bin/env", "--default-signal=INT", "/home/u/.local/bin/claude", "-p", "--verbose"),
        argv.subList(dashes + 5, argv.size()));
    assertEquals("/home/u/project", argv.get(argv.indexOf("--chdir") + 1));
  }

  @Test
  void theSandboxHasNoPrivilegeAndItsOwnNamespaces() {
    List<String> argv =
        SandboxCommand.argv(
            inputs(new HarnessGrants(List.of(), List.of(), false, HOME), List.of()));
    List<String> bwrap =
        argv.subList(argv.indexOf("/usr/bin/bwrap") + 1, argv.indexOf("--ro-bind"));
    assertEquals(
        List.of(
            "--unshare-user",
            "--uid",
            "0",
            "--gid",
            "0",
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--cap-drop",
            "ALL",
            "--die-with-parent",
            "--seccomp",
            "3"),
        bwrap.subList(0, 16));
    assertFalse(
        argv.contains("--new-session"), "would take the harness out of the signalled group");
  }

  @Test
  void theSealedRootShowsTheSystemAndACuratedEtcOnly() {
    List<String> m =
        SandboxCommand.mounts(
                inputs(new HarnessGrants(List.of(), List.of(), false, HOME), List.of()))
            .stream()
            .map(Mount::toString)
            .toList();
    for (String shown :
        List.of(
            "--ro-bind /usr",
            "--symlink usr/bin /bin",
            "--symlink usr/lib64 /lib64",
            "--dir /etc",
            "--ro-bind-try /etc/passwd",
            "--ro-bind-try /etc/ssl",
            "--ro-bind-try /etc/resolv.conf",
            "--dev /dev",
            "--proc /proc",
            "--ro-bind-try /proc/sys",
            "--tmpfs /tmp")) {
      assertTrue(m.contains(shown), shown + " in " + m);
    }
    for (String hidden : List.of("/etc/shadow", "/etc/ssh", "/run", "/var", "/srv", "/opt", "/")) {
      assertTrue(
          m.stream().noneMatch(x -> x.endsWith(" " + hidden)), hidden + " must be absent: " + m);
    }
    // bwrap lays them in order: /proc before /proc/sys, /etc before its entries.
    assertTrue(m.indexOf("--proc /proc") < m.indexOf("--ro-bind-try /proc/sys"), m.toString());
    assertTrue(m.indexOf("--dir /etc") < m.indexOf("--ro-bind-try /etc/passwd"), m.toString());
  }

  @Test
  void anInstallationTheSystemShowsOrThatWouldShowTooMuchIsNotBound() {
    List<String> m =
        mounts(
            new HarnessGrants(List.of(), List.of(), false, HOME),
            List.of(Path.of("/usr/lib/node"), Path.of("/"), Path.of("/home"), Path.of("/opt/h")));
    assertEquals(
        List.of(
            "--tmpfs /home/u",
            "--ro-bind-try /opt/h",
            "--bind /tmp/.capsule-egress.sock",
            "--bind /home/u/project",
            "--bind /tmp/capsule-runs/t1/files-1"),
        m);
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

  /** The grants with {@code capsule} as the capsule folder and {@code paths} granted. */
  private static HarnessGrants withCapsule(
      String capsule, List<HarnessGrants.PathGrant> paths, boolean readOnly) {
    return new HarnessGrants(
        List.of(), paths, readOnly, HOME, List.of(), Optional.ofNullable(capsule).map(Path::of));
  }

  /** The capsule folder's mount, or "none": {@code op target}. */
  private static String capsuleMount(HarnessGrants grants, String target) {
    List<String> all = mounts(grants, List.of());
    String found = "none";
    for (String m : all) {
      if (m.endsWith(" " + target)) {
        found = m; // the last one at that target is the one the sandbox shows
      }
    }
    return found;
  }

  @Test
  void theCapsuleFolderIsBoundReadOnlyWhereTheSandboxWouldHideIt() {
    record Case(String capsule, String expected) {}
    for (Case c :
        List.of(
            new Case("/home/u/capsules/a", "--ro-bind-try /home/u/capsules/a"),
            new Case("/tmp/checkout/examples/hello", "--ro-bind-try /tmp/checkout/examples/hello"),
            // Hidden like the rest of the host: bound read-only too.
            new Case("/srv/capsules/a", "--ro-bind-try /srv/capsules/a"),
            // Never the hidden folder itself: that would show the whole home.
            new Case("/home/u", "--tmpfs /home/u"),
            new Case("/tmp", "none"),
            new Case("/home", "none"))) {
      assertEquals(
          c.expected(),
          capsuleMount(withCapsule(c.capsule(), List.of(), false), c.capsule()),
          c.capsule());
    }
    assertEquals(
        List.of(),
        mounts(withCapsule(null, List.of(), false), List.of()).stream()
            .filter(m -> m.contains("capsules"))
            .toList());
  }

  @Test
  void theCapsuleFolderStaysReadOnlyWhenAGrantOrTheWorkdirNamesIt() {
    String dir = "/home/u/project";
    HarnessGrants granted =
        withCapsule(
            dir, List.of(new HarnessGrants.PathGrant(Path.of(dir), Access.READ_WRITE)), false);
    // The working directory of these inputs is /home/u/project too.
    assertEquals("--ro-bind-try " + dir, capsuleMount(granted, dir));
    // A deeper grant keeps its own access.
    HarnessGrants deeper =
        withCapsule(
            dir,
            List.of(new HarnessGrants.PathGrant(Path.of(dir, "out"), Access.READ_WRITE)),
            false);
    assertEquals("--bind-try " + dir + "/out", capsuleMount(deeper, dir + "/out"));
    // Outside the hidden folders too: under a writable grant it is bound read-only again.
    HarnessGrants underWritable =
        withCapsule(
            "/srv/capsules/a",
            List.of(new HarnessGrants.PathGrant(Path.of("/srv"), Access.READ_WRITE)),
            false);
    assertEquals("--ro-bind-try /srv/capsules/a", capsuleMount(underWritable, "/srv/capsules/a"));
  }

  @Test
  void theProxyEnvironmentClearsNoProxy() {
    assertEquals("", SandboxCommand.proxyEnv().get("NO_PROXY"));
    assertEquals("http://127.0.0.1:3128", SandboxCommand.proxyEnv().get("HTTPS_PROXY"));
  }
}
