package io.capsule.testkit;

import io.capsule.driver.api.LaunchPlan;
import io.capsule.runtime.harness.AppliedLaunch;
import io.capsule.runtime.harness.HarnessLimits;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.harness.LaunchPlanApplier;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;

/** Runs a fake harness under the runtime's {@link HarnessProcess}, as a capsule run would. */
final class HarnessRunner {

  static final Duration WAIT = Duration.ofSeconds(30);

  final TestProbe<HarnessProcess.Event> probe;
  final ActorRef<HarnessProcess.Command> harness;
  final AppliedLaunch launch;
  final long pgid;
  final List<String> lines = new ArrayList<>();

  private HarnessRunner(ActorTestKit kit, AppliedLaunch launch) {
    this.launch = launch;
    this.probe = kit.createTestProbe();
    this.harness =
        kit.spawn(HarnessProcess.create(launch, probe.getRef(), HarnessLimits.defaults()));
    this.pgid = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT).pgid();
  }

  static HarnessRunner start(
      ActorTestKit kit, Path runDir, Path binary, List<String> args, byte[] stdin, boolean keepOpen)
      throws IOException {
    LaunchPlan plan =
        new LaunchPlan(args, List.of(), List.of(), Optional.of(stdin), keepOpen, Optional.empty());
    return new HarnessRunner(
        kit, LaunchPlanApplier.apply(plan, binary, runDir, runDir, List.of(), Map.of()));
  }

  /** Acknowledges batches until a line equal to {@code wanted} has come. */
  void readUntil(String wanted) {
    while (!lines.contains(wanted)) {
      lines.addAll(probe.expectMessageClass(HarnessProcess.Lines.class, WAIT).lines());
      harness.tell(new HarnessProcess.BatchHandled());
    }
  }

  /** Reads everything up to the exit and the end of stdout; the interrupt result if one came. */
  HarnessProcess.Exited finish() {
    HarnessProcess.Exited exit = null;
    boolean ended = false;
    while (exit == null || !ended) {
      HarnessProcess.Event event = probe.receiveMessage(WAIT);
      if (event instanceof HarnessProcess.Lines l) {
        lines.addAll(l.lines());
        harness.tell(new HarnessProcess.BatchHandled());
      } else if (event instanceof HarnessProcess.Exited e) {
        exit = e;
      } else if (event instanceof HarnessProcess.StdoutEnded) {
        ended = true;
      }
    }
    launch.close();
    return exit;
  }
}
