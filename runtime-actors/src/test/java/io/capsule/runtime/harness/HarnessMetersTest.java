package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.HarnessFixture.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.LaunchPlan;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.metrics.RuntimeMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness's meters on a real contained process (bubblewrap, socat and curl, as CI installs
 * them): one spawn timed as started, and every connection the egress proxy refuses counted, even
 * those the run is no longer told of one by one.
 */
class HarnessMetersTest {
  private final ActorTestKit kit = ActorTestKit.create(HarnessFixture.CONFIG);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @TempDir Path runDir;

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aContainedSpawnIsTimedAndEachRefusedConnectionCounted() throws IOException {
    RuntimeMetrics.get(kit.system()).bind(registry);
    int deniedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      deniedPort = s.getLocalPort(); // the allowlist is empty: any port is refused
    }
    Path inside = runDir.resolve(".harness-egress-denied.sh");
    Files.copy(
        HarnessFixture.script("egress-denied.sh"), inside, StandardCopyOption.REPLACE_EXISTING);
    LaunchPlan plan =
        new LaunchPlan(
            List.of(inside.toString(), String.valueOf(deniedPort)),
            List.of(),
            List.of(),
            Optional.of(new byte[0]),
            true,
            Optional.empty());
    AppliedLaunch launch =
        LaunchPlanApplier.apply(
            plan,
            Path.of("/bin/sh"),
            runDir,
            runDir,
            List.of("PATH"),
            HarnessFixture.HOST_ENV,
            new HarnessGrants(List.of(), List.of(), true, runDir));
    TestProbe<HarnessProcess.Event> probe = kit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness =
        kit.spawn(
            HarnessProcess.create(
                launch,
                probe.getRef(),
                HarnessFixture.limits()
                    .withContainment(ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED))));
    harness.tell(new HarnessProcess.CloseStdin());
    List<String> lines = new ArrayList<>();
    List<HarnessProcess.Event> events = new ArrayList<>();
    boolean exited = false;
    boolean ended = false;
    while (!exited || !ended) {
      HarnessProcess.Event e = probe.receiveMessage(WAIT);
      events.add(e);
      if (e instanceof HarnessProcess.Lines l) {
        lines.addAll(l.lines());
        harness.tell(new HarnessProcess.BatchHandled());
      }
      exited |= e instanceof HarnessProcess.Exited || e instanceof HarnessProcess.SpawnFailed;
      ended |= e instanceof HarnessProcess.StdoutEnded || e instanceof HarnessProcess.SpawnFailed;
    }
    assertEquals(List.of("denied 403", "denied 403", "denied 403"), lines, events::toString);
    assertEquals(
        1, registry.get("capsule.runner.harness.spawn").tag("result", "started").timer().count());
    assertTrue(
        registry
                .get("capsule.runner.harness.spawn")
                .timer()
                .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)
            > 0);
    // The refusals reach the harness actor on its own time: wait for them, bounded.
    probe.awaitAssert(
        WAIT,
        () -> {
          assertEquals(3.0, registry.get("capsule.runner.egress.refused").counter().count());
          return null;
        });
    HarnessFixture.assertClosedAndGone(launch);
  }
}
