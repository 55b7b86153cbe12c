package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.ContainedFixture.limits;
import static io.capsule.runtime.harness.ContainedFixture.lines;
import static io.capsule.runtime.harness.ContainedFixture.untilEnd;

import io.capsule.driver.api.LaunchPlan;
import io.capsule.runtime.escape.HostTargets;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The escape suite against a hostile harness (docs/containment.md "Escape suite"): with containment
 * required, every escape the hostile script tries is refused, on a runner running as root (CI) —
 * the sandbox's user is nobody inside, with no capabilities, whatever the runner is.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HarnessEscapeTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;

  @Test
  void aHostileHarnessEscapesNowhere() throws Exception {
    try (HostTargets host = new HostTargets()) {
      Path script = HostTargets.installScript(runDir);
      List<String> args = new ArrayList<>();
      args.add(script.toString());
      args.addAll(host.args());
      HarnessGrants grants =
          new HarnessGrants(List.of(), List.of(), false, Path.of(System.getProperty("user.home")));
      LaunchPlan plan =
          new LaunchPlan(args, List.of(), List.of(), Optional.empty(), false, Optional.empty());
      AppliedLaunch launch =
          LaunchPlanApplier.apply(
              plan,
              Path.of("/bin/sh"),
              runDir,
              runDir,
              List.of("PATH"),
              HarnessFixture.HOST_ENV,
              grants);
      TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
      ActorRef<HarnessProcess.Command> harness =
          testKit.spawn(
              HarnessProcess.create(
                  launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
      List<HarnessProcess.Event> events = untilEnd(probe, harness);
      host.assertAllHeld(String.join("\n", lines(events)), HostTargets.ALWAYS);
      launch.close();
    }
  }
}
