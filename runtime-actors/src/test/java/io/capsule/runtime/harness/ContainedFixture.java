package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.HarnessFixture.WAIT;

import io.capsule.driver.api.LaunchPlan;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;

/** What the contained-harness tests share: launches of test scripts and reading what came back. */
final class ContainedFixture {

  private ContainedFixture() {}

  static HarnessLimits limits(ContainmentConfig.Mode mode) {
    return HarnessFixture.limits().withContainment(ContainmentConfig.defaults(mode));
  }

  /**
   * {@code /bin/sh <script> args} with PATH granted and stdin kept open. The script is copied into
   * the working directory {@code runDir} first: the test classes may sit under /tmp or $HOME (a CI
   * clone), which the sandbox hides, and {@code /bin/sh}'s installation does not include them.
   */
  static AppliedLaunch launch(Path runDir, HarnessGrants grants, String script, String... args)
      throws IOException {
    Path inside = runDir.resolve(".harness-" + script);
    Files.copy(HarnessFixture.script(script), inside, StandardCopyOption.REPLACE_EXISTING);
    List<String> all = new ArrayList<>();
    all.add(inside.toString());
    all.addAll(List.of(args));
    return launch(runDir, grants, Path.of("/bin/sh"), all);
  }

  /** {@code binary args} with PATH granted and stdin kept open, working in {@code runDir}. */
  static AppliedLaunch launch(Path runDir, HarnessGrants grants, Path binary, List<String> args)
      throws IOException {
    LaunchPlan plan =
        new LaunchPlan(
            args, List.of(), List.of(), Optional.of(new byte[0]), true, Optional.empty());
    return LaunchPlanApplier.apply(
        plan, binary, runDir, runDir, List.of("PATH"), HarnessFixture.HOST_ENV, grants);
  }

  /** Everything the harness sends until it has exited and its stdout ended. */
  static List<HarnessProcess.Event> untilEnd(
      TestProbe<HarnessProcess.Event> probe, ActorRef<HarnessProcess.Command> harness) {
    List<HarnessProcess.Event> events = new ArrayList<>();
    boolean exited = false;
    boolean ended = false;
    while (!exited || !ended) {
      HarnessProcess.Event e = probe.receiveMessage(WAIT);
      events.add(e);
      if (e instanceof HarnessProcess.Lines) {
        harness.tell(new HarnessProcess.BatchHandled());
      }
      exited |= e instanceof HarnessProcess.Exited || e instanceof HarnessProcess.SpawnFailed;
      ended |= e instanceof HarnessProcess.StdoutEnded || e instanceof HarnessProcess.SpawnFailed;
    }
    return events;
  }

  static List<String> lines(List<HarnessProcess.Event> events) {
    List<String> out = new ArrayList<>();
    events.stream()
        .filter(HarnessProcess.Lines.class::isInstance)
        .forEach(e -> out.addAll(((HarnessProcess.Lines) e).lines()));
    return out;
  }

  static <T> List<T> of(List<HarnessProcess.Event> events, Class<T> type) {
    return events.stream().filter(type::isInstance).map(type::cast).toList();
  }

  /** A number no other test's {@code sleep} uses: the children sleep that many seconds. */
  static String marker() {
    return "3" + (System.nanoTime() % 100000 + 100000);
  }

  /** Live processes whose command line is {@code sleep <marker>}, from /proc. */
  static long sleepers(String marker) throws IOException {
    long n = 0;
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path p : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
        try {
          String cmd = Files.readString(p.resolve("cmdline")).replace('\0', ' ').strip();
          if (cmd.equals("sleep " + marker)) {
            n++;
          }
        } catch (IOException e) {
          // Gone while listing.
        }
      }
    }
    return n;
  }

  /** Waits (bounded, on the probe's clock) until no {@code sleep <marker>} is alive. */
  static void assertNoSleepers(TestProbe<?> probe, String marker) {
    probe.awaitAssert(
        WAIT,
        () -> {
          org.junit.jupiter.api.Assertions.assertEquals(
              0, sleepers(marker), "sleep " + marker + " left behind");
          return null;
        });
  }
}
