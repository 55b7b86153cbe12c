package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a run does about its trace: written off the actor thread, and never lost in silence. */
class RunTraceTest {

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aTraceThatCannotBeWrittenIsAWarningInTheEventsAndTheOutcome(@TempDir Path good)
      throws Exception {
    // The run directory would go under a regular file: neither it nor the trace can be made.
    Path file = Files.writeString(good.resolve("not-a-dir"), "");
    RunLimits bad = RunLimits.defaults(file.resolve("runs"));
    RunFixture fx =
        new RunFixture(
            kit,
            RunFixture.limits(good),
            EmbeddedRuntime.create(kit.system(), bad, EmbeddedRuntime.noFolderDrivers()));
    CapsuleRef ref = fx.scenario("{\"type\":\"turn-end\",\"value\":\"r\"}");
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());
    List<RunEvent> events = RunFixture.events(probe, Duration.ofSeconds(20));

    List<RunEvent.Warning> warnings = RunFixture.only(events, RunEvent.Warning.class);
    assertTrue(
        warnings.stream().anyMatch(w -> w.code().equals("W-RUN-044")), "warned: " + warnings);
    RunOutcome o = RunFixture.outcome(events);
    assertTrue(o.message().contains("W-RUN-044"), o.message());
  }

  @Test
  void runDirectoriesAreOwnerOnly(@TempDir Path root) throws Exception {
    RunFixture fx = new RunFixture(kit, RunFixture.limits(root));
    CapsuleRef ref = fx.scenario("{\"type\":\"turn-end\",\"value\":\"r\"}");
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());
    assertEquals(
        "r",
        RunFixture.outcome(RunFixture.events(probe, Duration.ofSeconds(20)))
            .result()
            .orElseThrow());

    try (var dirs = Files.list(root)) {
      List<Path> runs = dirs.filter(Files::isDirectory).toList();
      assertEquals(1, runs.size(), "one run directory: " + runs);
      assertEquals(
          "rwx------",
          java.nio.file.attribute.PosixFilePermissions.toString(
              Files.getPosixFilePermissions(runs.get(0))));
      assertEquals(
          "rw-------",
          java.nio.file.attribute.PosixFilePermissions.toString(
              Files.getPosixFilePermissions(runs.get(0).resolve("trace.jsonl"))));
    }
  }

  @Test
  void aRunThatEndsRemovesOldFinishedRunsAndKeepsItsOwn(@TempDir Path root) throws Exception {
    long monthAgo = System.currentTimeMillis() - Duration.ofDays(30).toMillis();
    Path old = Files.createDirectories(root.resolve("old-task-" + monthAgo + "-1"));
    Files.writeString(
        old.resolve("trace.jsonl"), "{\"event_type\":\"run_end\",\"timestamp\":\"x\"}\n");
    Path going = Files.createDirectories(root.resolve("going-" + monthAgo + "-2"));
    Files.writeString(going.resolve("trace.jsonl"), "{\"event_type\":\"run_start\"}\n");
    RunFixture fx = new RunFixture(kit, RunFixture.limits(root));
    CapsuleRef ref = fx.scenario("{\"type\":\"turn-end\",\"value\":\"r\"}");
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "t"), probe.ref());
    RunFixture.outcome(RunFixture.events(probe, Duration.ofSeconds(20)));

    // Retention runs after the report, off the run's thread: wait (bounded) for its effect.
    probe.awaitAssert(
        Duration.ofSeconds(10),
        () -> {
          assertTrue(Files.notExists(old), "a finished run older than capsule.run.keep.age");
          return null;
        });
    assertTrue(Files.exists(going), "a run without run_end is still going: never removed");
    try (var dirs = Files.list(root)) {
      assertEquals(2, dirs.filter(Files::isDirectory).count(), "this run's and the going one");
    }
  }
}
