package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.settings.ResourceSettings.Mechanism;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which mechanism a host gets, and why: the decision as a table over facts, and the probe over
 * temp-dir copies of the three layouts (pure v2, hybrid, none). The files are fakes of the kernel's
 * layout only for reading facts; real cgroups are in {@link RunCgroupTest}.
 */
class CgroupModeTest {

  @TempDir Path root;

  static final Path V2 = Path.of("/sys/fs/cgroup");

  /** v2: parent present, writable?, delegated; v1: controllers present, writable. */
  static CgroupHost host(String v2, String v1Present, String v1Writable) {
    Optional<Path> parent = v2.equals("none") ? Optional.empty() : Optional.of(V2);
    boolean writable = v2.startsWith("rw");
    Set<String> delegated =
        v2.contains(":") ? Set.of(v2.substring(v2.indexOf(':') + 1).split("\\+")) : Set.of();
    Map<String, Path> parents = new java.util.HashMap<>();
    for (String c : v1Present.split("\\+")) {
      if (!c.isEmpty()) {
        parents.put(c, Path.of("/sys/fs/cgroup", c, "own"));
      }
    }
    Set<String> w = v1Writable.isEmpty() ? Set.of() : Set.of(v1Writable.split("\\+"));
    return new CgroupHost(parent, writable, delegated, parents, w);
  }

  @ParameterizedTest(name = "[{0}] v2 {1}, v1 {2} writable {3} → {4}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          auto        | rw:memory+pids+cpu | memory+pids+cpu | memory+pids+cpu | v2 cpu
          auto        | rw:memory+pids     | ''              | ''              | v2 nocpu
          auto        | rw                 | memory+pids+cpu | memory+pids+cpu | v1 cpu
          auto        | ro:memory+pids     | memory+pids+cpu | memory+pids     | v1 nocpu
          auto        | rw:memory          | memory+pids+cpu | memory          | rlimit
          auto        | none               | memory+pids     | ''              | rlimit
          auto        | none               | memory          | memory          | rlimit
          auto        | none               | ''              | ''              | rlimit
          cgroup-v1   | rw:memory+pids+cpu | memory+pids+cpu | memory+pids+cpu | v1 cpu
          cgroup-v2   | rw                 | memory+pids+cpu | memory+pids+cpu | rlimit
          cgroup-v1   | rw:memory+pids     | ''              | ''              | rlimit
          rlimit-only | rw:memory+pids+cpu | memory+pids+cpu | memory+pids+cpu | rlimit
          """)
  void theDecisionFollowsItsRulesInOrder(
      String asked, String v2, String v1, String v1Writable, String expected) {
    Mechanism mechanism = Mechanism.valueOf(asked.toUpperCase().replace('-', '_'));
    CgroupMode mode = CgroupMode.decide(mechanism, host(v2, v1, v1Writable));

    switch (expected) {
      case "v2 cpu", "v2 nocpu" -> {
        CgroupMode.V2 m = assertInstanceOf(CgroupMode.V2.class, mode);
        assertEquals(expected.equals("v2 cpu"), m.cpu());
        assertEquals(Optional.empty(), mode.warning());
      }
      case "v1 cpu", "v1 nocpu" -> {
        CgroupMode.V1 m = assertInstanceOf(CgroupMode.V1.class, mode);
        assertEquals(expected.equals("v1 cpu"), m.parents().containsKey("cpu"));
        assertTrue(m.parents().keySet().containsAll(Set.of("memory", "pids")));
        assertEquals(Optional.empty(), mode.warning());
      }
      default -> {
        assertInstanceOf(CgroupMode.RlimitOnly.class, mode);
        assertEquals(Code.W_CAP_053, mode.warning().orElseThrow().code());
      }
    }
  }

  @Test
  void doctorsLineSaysWhyEachVersionWasNotUsed() {
    assertEquals(
        "rlimits only (cgroup v2 at /sys/fs/cgroup does not delegate memory and pids (not in its"
            + " cgroup.subtree_control); cgroup v1 /sys/fs/cgroup/memory/own and"
            + " /sys/fs/cgroup/pids/own not writable)",
        CgroupMode.decide(Mechanism.AUTO, host("rw", "memory+pids", "")).describe());
    assertEquals(
        "cgroup v1: cpu, memory, pids in /sys/fs/cgroup/cpu/own/capsule,"
            + " /sys/fs/cgroup/memory/own/capsule, /sys/fs/cgroup/pids/own/capsule (cgroup v2 at"
            + " /sys/fs/cgroup is not writable by this user)",
        CgroupMode.decide(Mechanism.AUTO, host("ro", "memory+pids+cpu", "memory+pids+cpu"))
            .describe());
    assertEquals(
        "rlimits only (mechanism = cgroup-v2 but no cgroup v2 hierarchy is mounted)",
        CgroupMode.decide(Mechanism.CGROUP_V2, host("none", "", "")).describe());
  }

  @Test
  void aPureV2HostWithDelegationIsReadAsV2() throws IOException {
    write(root.resolve("cgroup.controllers"), "cpuset cpu io memory pids");
    write(root.resolve("cgroup.subtree_control"), "cpu memory pids\n");
    write(root.resolve("cgroup.procs"), "1\n");

    CgroupHost host = CgroupHost.probe(root, "", "0::/init.scope\n");
    CgroupMode mode = CgroupMode.decide(Mechanism.AUTO, host);

    assertEquals(new CgroupMode.V2(root, true), mode);
    assertEquals(Map.of(), host.v1Parents(), "a v2 root is no v1 controller");
  }

  @Test
  void aConfiguredV2ParentIsReadRelativeToTheRoot() throws IOException {
    write(root.resolve("cgroup.controllers"), "cpu memory pids");
    Path service = root.resolve("system.slice/capsule.service");
    write(service.resolve("cgroup.subtree_control"), "memory pids");

    CgroupMode mode =
        CgroupMode.decide(
            Mechanism.AUTO, CgroupHost.probe(root, "system.slice/capsule.service", ""));

    assertEquals(new CgroupMode.V2(service, false), mode);
  }

  /** This machine kind: v1 controllers beside a v2 "unified" directory with none delegated. */
  @Test
  void aHybridHostIsReadAsV1InTheRunnersOwnCgroups() throws IOException {
    write(root.resolve("unified/cgroup.controllers"), "");
    write(root.resolve("unified/cgroup.subtree_control"), "");
    for (String c : new String[] {"memory", "pids", "cpu", "blkio"}) {
      write(root.resolve(c).resolve("cgroup.procs"), "");
    }
    Files.createDirectories(root.resolve("memory/process_api/abc"));
    String self = "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n9:name=systemd:/\n0::/\n";

    CgroupMode mode = CgroupMode.decide(Mechanism.AUTO, CgroupHost.probe(root, "", self));

    CgroupMode.V1 v1 = assertInstanceOf(CgroupMode.V1.class, mode);
    assertEquals(
        Map.of(
            "memory", root.resolve("memory/process_api/abc"),
            "pids", root.resolve("pids"),
            "cpu", root.resolve("cpu")),
        v1.parents());
    assertTrue(
        mode.describe()
            .endsWith(
                "(cgroup v2 at "
                    + root.resolve("unified")
                    + " does not delegate"
                    + " memory and pids (not in its cgroup.subtree_control))"),
        mode::describe);
  }

  @Test
  void aHostWithNoCgroupsIsRlimitsOnly() {
    CgroupMode mode = CgroupMode.decide(Mechanism.AUTO, CgroupHost.probe(root, "", ""));

    assertEquals(
        new CgroupMode.RlimitOnly(
            "no cgroup v2 hierarchy is mounted; no cgroup v1 memory and pids hierarchy"),
        mode);
  }

  @Test
  void underRlimitsOnlyARunCgroupHoldsNothing() throws IOException {
    RunCgroup none =
        RunCgroup.create(
            new CgroupMode.RlimitOnly("test"), "r", new ResourceLimits(1, 4, 1, 1, 64, List.of()));

    assertEquals(List.of(), none.procsFiles());
    assertEquals(Optional.empty(), none.breach());
    none.close();
    none.close();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          4:memory:/a/b                     | memory | /a/b
          1:cpu,cpuacct:/x                  | cpu    | /x
          1:cpu,cpuacct:/x                  | cpuacct| /x
          9:name=systemd:/s                 | name=systemd | -
          0::/unified/path                  | ''     | -
          """)
  void selfCgroupLinesGiveEachV1ControllersPath(String line, String controller, String path) {
    assertEquals(
        path.equals("-") ? null : path, CgroupHost.selfCgroupV1(line).get(controller.strip()));
  }

  private static void write(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }
}
