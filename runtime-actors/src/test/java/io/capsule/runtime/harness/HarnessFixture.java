package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.driver.api.LaunchPlan;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;

/** Shared pieces of the real-process harness tests: scripts, launches, a collecting reader. */
final class HarnessFixture {

  static final String IO_DISPATCHER = "harness-test-io";

  /** A growing-enough pool for the blocking pipe reads of the tests' harnesses. */
  static final Config CONFIG =
      ConfigFactory.parseString(
          IO_DISPATCHER
              + " {\n"
              + "  type = Dispatcher\n"
              + "  executor = thread-pool-executor\n"
              + "  thread-pool-executor { fixed-pool-size = 512, allow-core-timeout = on }\n"
              + "  throughput = 1\n"
              + "}\n"
              + "pekko.loglevel = INFO\n");

  /** Host env the tests grant: a PATH so the scripts find coreutils. */
  static final Map<String, String> HOST_ENV =
      Map.of("PATH", "/usr/bin:/bin", "HOME", "/nonexistent");

  static final Duration WAIT = Duration.ofSeconds(20);

  private HarnessFixture() {}

  static HarnessLimits limits() {
    return HarnessLimits.defaults().withIoDispatcher(IO_DISPATCHER);
  }

  static Path script(String name) {
    URL url = HarnessFixture.class.getResource("/harness/" + name);
    if (url == null) {
      throw new IllegalArgumentException("no test script " + name);
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code /bin/sh <script> args...} with PATH granted, stdin closed after {@code stdin}. */
  static AppliedLaunch shLaunch(Path runDir, String script, String... args) throws IOException {
    return shLaunch(runDir, script, new byte[0], false, args);
  }

  static AppliedLaunch shLaunch(
      Path runDir, String script, byte[] stdin, boolean keepStdinOpen, String... args)
      throws IOException {
    List<String> all = new ArrayList<>();
    all.add(script(script).toString());
    all.addAll(List.of(args));
    return launch(runDir, Path.of("/bin/sh"), all, stdin, keepStdinOpen);
  }

  static AppliedLaunch launch(
      Path runDir, Path binary, List<String> args, byte[] stdin, boolean keepStdinOpen)
      throws IOException {
    LaunchPlan plan =
        new LaunchPlan(
            args,
            List.of(),
            List.of(new io.capsule.driver.api.DriverFile("marker", "x")),
            Optional.of(stdin),
            keepStdinOpen,
            Optional.empty());
    return LaunchPlanApplier.apply(plan, binary, runDir, runDir, List.of("PATH", "HOME"), HOST_ENV);
  }

  /** What a harness produced until both its stdout ended and it exited. */
  record Collected(
      long pgid,
      List<String> lines,
      List<String> cutNotes,
      int batches,
      List<Boolean> interrupts,
      List<io.capsule.config.diag.Diagnostic> stdinFailures,
      HarnessProcess.Exited exit) {}

  /**
   * Expects {@code Spawned}, then acknowledges every batch until {@code StdoutEnded} and {@code
   * Exited} have both arrived; interrupt results and stdin failures (which race with the output)
   * are recorded wherever they come.
   */
  static Collected collect(
      TestProbe<HarnessProcess.Event> probe, ActorRef<HarnessProcess.Command> harness) {
    HarnessProcess.Spawned spawned = probe.expectMessageClass(HarnessProcess.Spawned.class, WAIT);
    return collectAfterSpawn(probe, harness, spawned.pgid());
  }

  static Collected collectAfterSpawn(
      TestProbe<HarnessProcess.Event> probe, ActorRef<HarnessProcess.Command> harness, long pgid) {
    List<String> lines = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    List<Boolean> interrupts = new ArrayList<>();
    List<io.capsule.config.diag.Diagnostic> stdinFailures = new ArrayList<>();
    int batches = 0;
    boolean ended = false;
    HarnessProcess.Exited exit = null;
    while (!ended || exit == null) {
      HarnessProcess.Event event = probe.receiveMessage(WAIT);
      if (event instanceof HarnessProcess.Lines l) {
        lines.addAll(l.lines());
        batches++;
        harness.tell(new HarnessProcess.BatchHandled());
      } else if (event instanceof HarnessProcess.LineCut c) {
        notes.add(c.note());
      } else if (event instanceof HarnessProcess.StdoutEnded) {
        assertFalse(ended, "StdoutEnded twice");
        ended = true;
      } else if (event instanceof HarnessProcess.Exited e) {
        assertEquals(null, exit, "Exited twice");
        exit = e;
      } else if (event instanceof HarnessProcess.InterruptResult r) {
        interrupts.add(r.delivered());
      } else if (event instanceof HarnessProcess.StdinFailed f) {
        stdinFailures.add(f.diagnostic());
      } else {
        throw new AssertionError("unexpected " + event);
      }
    }
    return new Collected(pgid, lines, notes, batches, interrupts, stdinFailures, exit);
  }

  /** Lines up to the first batch that holds {@code wanted}; acknowledges each batch. */
  static List<String> readUntil(
      TestProbe<HarnessProcess.Event> probe,
      ActorRef<HarnessProcess.Command> harness,
      String wanted) {
    List<String> lines = new ArrayList<>();
    while (!lines.contains(wanted)) {
      HarnessProcess.Lines batch = probe.expectMessageClass(HarnessProcess.Lines.class, WAIT);
      lines.addAll(batch.lines());
      harness.tell(new HarnessProcess.BatchHandled());
    }
    return lines;
  }

  /** Waits (by polling the probe's clock, not sleeping) until no process of the group is alive. */
  static void assertGroupGone(TestProbe<?> probe, long pgid) {
    probe.awaitAssert(
        WAIT,
        () -> {
          assertEquals(List.of(), ProcessGroup.liveMembers(pgid), "live members of " + pgid);
          return null;
        });
  }

  static void assertClosedAndGone(AppliedLaunch launch) {
    launch.close();
    assertFalse(Files.exists(launch.filesDir()), "files dir left behind");
  }
}
