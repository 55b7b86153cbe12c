package io.capsule.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.Manifest;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.CapsuleSharding;
import io.capsule.runtime.javadsl.CapsuleShardingSettings;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;

/** Capsules and runs over a {@link CapsuleClusterKit} for the sharding tests. */
final class ShardedRuns {

  static final String RUNNER = "capsule-runner";
  static final Duration WAIT = Duration.ofSeconds(60);
  private static final AtomicInteger TASKS = new AtomicInteger();

  private final Path dir;

  ShardedRuns(Path dir) {
    this.dir = dir;
  }

  /**
   * Inits sharding on every live node; on each runner node registers capsule {@code name} whose
   * harness says which node it runs on, waits {@code pause}, and ends the turn.
   */
  List<CapsuleSharding> init(
      CapsuleClusterKit cluster, String name, Duration pause, int maxConcurrent) {
    return init(cluster, name, pause, s -> s.withMaxConcurrent(maxConcurrent));
  }

  /** As above, with each node's settings changed by {@code tweak}. */
  List<CapsuleSharding> init(
      CapsuleClusterKit cluster,
      String name,
      Duration pause,
      UnaryOperator<CapsuleShardingSettings> tweak) {
    List<CapsuleSharding> all = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      ActorSystem<Void> node = cluster.node(i);
      if (node.whenTerminated().isCompleted()) {
        all.add(null);
        continue;
      }
      all.add(initNode(node, "n" + i, name, pause, tweak));
    }
    return all;
  }

  CapsuleSharding initNode(
      ActorSystem<Void> node,
      String label,
      String name,
      Duration pause,
      UnaryOperator<CapsuleShardingSettings> tweak) {
    RunLimits limits =
        RunLimits.defaults(dir.resolve("runs-" + label)).withInterruptGrace(Duration.ofSeconds(1));
    CapsuleShardingSettings settings =
        CapsuleShardingSettings.from(
                node.settings().config(), limits, EmbeddedRuntime.noFolderDrivers())
            .withSlotWait(Duration.ofSeconds(120), 1000);
    CapsuleSharding sharding = CapsuleSharding.init(node, tweak.apply(settings));
    if (sharding.hostsRuns()) {
      register(sharding, label, name, pause);
    }
    return sharding;
  }

  void register(CapsuleSharding sharding, String label, String name, Duration pause) {
    try {
      Path harness =
          HarnessScript.builder()
              .out("{\"type\":\"text\",\"value\":\"on " + label + "\"}")
              .sleep(pause)
              .out("{\"type\":\"turn-end\",\"value\":\"done on " + label + "\"}")
              .exit(0)
              .build()
              .writeShellScript(dir.resolve(name + "-" + label + ".sh"));
      ScriptedDriver.Builder driver =
          ScriptedDriver.builder(name, harness.toString())
              .plan(ScriptedDriver.Builder.plan(List.of()));
      Manifest manifest =
          Manifest.builder(name, "0.1.0")
              .builtinDriver(name, "0.1.0")
              .command(harness.toString())
              .envAllow("PATH")
              .build();
      sharding
          .register(name, manifest, driver::build)
          .toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static RunRequest request(String capsule) {
    return RunRequest.of(
        "task-" + TASKS.incrementAndGet(), new CapsuleRef.Registered(capsule), "go");
  }

  /** Every event up to and including the one Finished; then nothing more. */
  static List<RunEvent> events(TestProbe<RunEvent> probe) {
    List<RunEvent> all = new ArrayList<>();
    while (true) {
      RunEvent e = probe.receiveMessage(WAIT);
      all.add(e);
      if (e instanceof RunEvent.Finished) {
        probe.expectNoMessage(Duration.ofMillis(300));
        return all;
      }
    }
  }

  static RunOutcome outcome(List<RunEvent> events) {
    assertEquals(
        1, events.stream().filter(e -> e instanceof RunEvent.Finished).count(), "one outcome");
    return ((RunEvent.Finished) events.get(events.size() - 1)).outcome();
  }

  static String hostOf(RunEvent e) {
    return ((RunEvent.TextCompleted) e).text().substring("on ".length());
  }

  /**
   * Receives every event into {@code into} until the run says which node it runs on (its first
   * {@code TextCompleted}); returns that node's label. Unlike {@link #awaitHost}, nothing is
   * dropped: a retried run's lost attempt can be checked afterwards.
   */
  static String recordUntilHost(TestProbe<RunEvent> probe, List<RunEvent> into) {
    while (true) {
      RunEvent e = probe.receiveMessage(WAIT);
      into.add(e);
      if (e instanceof RunEvent.TextCompleted) {
        return hostOf(e);
      }
    }
  }

  /**
   * Checks a run whose first host ({@code lostLabel}, at cluster address {@code lostAddress}) was
   * lost, retried once: the lost attempt's events are all there, before exactly one {@code
   * AttemptLost} that marks them (attempt 1, {@code E-CLU-001}, the lost node's address); every
   * event after the mark is the second attempt's, on another node; one outcome, {@code done}, last.
   *
   * @return the label of the node that ran the second attempt
   */
  static String assertLostAttemptKeptAndMarked(
      List<RunEvent> all, String lostLabel, String lostAddress) {
    RunOutcome done = outcome(all);
    assertEquals(RunStatus.DONE, done.status(), done.message());
    List<Integer> marks = new ArrayList<>();
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i) instanceof RunEvent.AttemptLost) {
        marks.add(i);
      }
    }
    assertEquals(1, marks.size(), "one lost attempt, marked once: " + all);
    int mark = marks.get(0);
    RunEvent.AttemptLost lost = (RunEvent.AttemptLost) all.get(mark);
    assertEquals(1, lost.attempt());
    assertEquals("E-CLU-001", lost.code());
    assertEquals(lostAddress, lost.node());
    List<String> before = hosts(all.subList(0, mark));
    List<String> after = hosts(all.subList(mark + 1, all.size()));
    assertEquals(List.of(lostLabel), before, "the lost attempt's events are kept before the mark");
    assertEquals(1, after.size(), "the second attempt's events follow the mark: " + all);
    String second = after.get(0);
    assertNotEquals(lostLabel, second, "ran again on another node");
    assertEquals(Optional.of("done on " + second), done.result());
    assertTrue(
        all.subList(0, mark).stream().noneMatch(e -> e instanceof RunEvent.Finished),
        "no outcome for the lost attempt");
    return second;
  }

  private static List<String> hosts(List<RunEvent> events) {
    return events.stream()
        .filter(e -> e instanceof RunEvent.TextCompleted)
        .map(ShardedRuns::hostOf)
        .toList();
  }

  static String awaitHost(TestProbe<RunEvent> probe) {
    return hostOf(
        probe
            .fishForMessage(
                WAIT,
                e ->
                    e instanceof RunEvent.TextCompleted
                        ? org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes.complete()
                        : org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes
                            .continueAndIgnore())
            .get(0));
  }
}
