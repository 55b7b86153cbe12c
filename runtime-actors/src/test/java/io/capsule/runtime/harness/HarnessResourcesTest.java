package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.ContainedFixture.limits;
import static io.capsule.runtime.harness.ContainedFixture.lines;
import static io.capsule.runtime.harness.ContainedFixture.untilEnd;
import static io.capsule.runtime.harness.HarnessFixture.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.manifest.Capabilities;
import io.capsule.runtime.escape.HostTargets;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A contained harness held to {@code capabilities.resources} (docs/containment.md "Resources"): a
 * fork bomb and a memory hog are stopped by the run's cgroup and told as {@code E-RUN-048} and
 * {@code E-RUN-047}; a file-size bomb and fd exhaustion stop at their rlimits. Real cgroups (v1 on
 * this machine kind, as root); nothing of the run is left afterwards.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HarnessResourcesTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;

  @BeforeAll
  void cgroupsAreWritable() {
    boolean root = "root".equals(System.getProperty("user.name"));
    if (System.getenv("CI") == null) {
      Assumptions.assumeTrue(root, "cgroups are written as root");
    }
  }

  private static HarnessGrants grants(Capabilities.Resources resources) {
    return new HarnessGrants(List.of(), List.of(), false, Path.of(System.getProperty("user.home")))
        .withResources(resources);
  }

  private static Capabilities.Resources resources(
      OptionalLong memory, OptionalInt processes, OptionalLong fileSize, OptionalInt openFiles) {
    return new Capabilities.Resources(
        memory, processes, OptionalDouble.empty(), fileSize, openFiles);
  }

  /** Runs {@code /bin/sh -c script} contained; answers every event until it has ended. */
  private List<HarnessProcess.Event> run(HarnessGrants grants, String script, boolean killOnLimit)
      throws Exception {
    AppliedLaunch launch =
        ContainedFixture.launch(runDir, grants, Path.of("/bin/sh"), List.of("-c", script));
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
    List<HarnessProcess.Event> events = new ArrayList<>();
    boolean exited = false;
    boolean ended = false;
    while (!exited || !ended) {
      HarnessProcess.Event e = probe.receiveMessage(WAIT);
      events.add(e);
      if (e instanceof HarnessProcess.Lines) {
        harness.tell(new HarnessProcess.BatchHandled());
      }
      if (e instanceof HarnessProcess.LimitPassed && killOnLimit) {
        harness.tell(new HarnessProcess.Kill("the run passed a limit")); // as the run does
      }
      exited |= e instanceof HarnessProcess.Exited || e instanceof HarnessProcess.SpawnFailed;
      ended |= e instanceof HarnessProcess.StdoutEnded || e instanceof HarnessProcess.SpawnFailed;
    }
    testKit.stop(harness);
    launch.close();
    return events;
  }

  private static List<HarnessProcess.LimitPassed> limitsPassed(List<HarnessProcess.Event> events) {
    return ContainedFixture.of(events, HarnessProcess.LimitPassed.class);
  }

  @Test
  void aForkBombStopsAtTheProcessLimitAndIsToldAsE_RUN_048() throws Exception {
    String marker = ContainedFixture.marker();
    List<HarnessProcess.Event> events =
        run(
            grants(
                resources(
                    OptionalLong.empty(),
                    OptionalInt.of(32),
                    OptionalLong.empty(),
                    OptionalInt.empty())),
            "while :; do sleep " + marker + " & done",
            true);
    List<HarnessProcess.LimitPassed> passed = limitsPassed(events);
    assertEquals(1, passed.size(), events.toString());
    assertEquals(Code.E_RUN_048, passed.get(0).diagnostic().code());
    ContainedFixture.assertNoSleepers(testKit.createTestProbe(), marker);
  }

  @Test
  void aMemoryHogIsKilledAtTheMemoryLimitAndToldAsE_RUN_047BeforeItsExit() throws Exception {
    List<HarnessProcess.Event> events =
        run(
            grants(
                resources(
                    OptionalLong.of(64L << 20),
                    OptionalInt.empty(),
                    OptionalLong.empty(),
                    OptionalInt.empty())),
            "head -c 400M /dev/zero | tail -c 300M > /dev/null; echo survived",
            false);
    List<HarnessProcess.LimitPassed> passed = limitsPassed(events);
    assertEquals(1, passed.size(), events.toString());
    assertEquals(Code.E_RUN_047, passed.get(0).diagnostic().code());
    int told = events.indexOf(passed.get(0));
    int exit = events.indexOf(ContainedFixture.of(events, HarnessProcess.Exited.class).get(0));
    assertTrue(told < exit, "the breach is told before the exit: " + events);
  }

  @Test
  void aFileSizeBombAndFdExhaustionStopAtTheirRlimitsAndEveryOtherEscapeStillHolds()
      throws Exception {
    try (HostTargets host = new HostTargets()) {
      Path script = HostTargets.installScript(runDir);
      List<String> args = new ArrayList<>();
      args.add(script.toString());
      args.addAll(host.args(16, 256));
      AppliedLaunch launch =
          ContainedFixture.launch(
              runDir,
              grants(
                  resources(
                      OptionalLong.empty(),
                      OptionalInt.empty(),
                      OptionalLong.of(8L << 20),
                      OptionalInt.of(256))),
              Path.of("/bin/sh"),
              args);
      TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
      ActorRef<HarnessProcess.Command> harness =
          testKit.spawn(
              HarnessProcess.create(
                  launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
      List<HarnessProcess.Event> events = untilEnd(probe, harness);
      Set<String> expected = new HashSet<>(HostTargets.ALWAYS);
      expected.add("file-size-bomb");
      expected.add("fd-exhaustion");
      host.assertAllHeld(String.join("\n", lines(events)), expected);
      assertTrue(Files.notExists(runDir.resolve("big")));
      launch.close();
    }
  }
}
