package io.capsule.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.TurnFailure;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.CapsuleSharding;
import io.capsule.runtime.javadsl.CapsuleShardingSettings;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.BufferOverflowException;
import org.apache.pekko.stream.javadsl.AsPublisher;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * {@link CapsuleSharding#source}, its events relayed into the stream in chunks as {@link
 * EmbeddedRuntime#source}'s are: on a two-node cluster (a caller node and a runner node) every
 * event once and in order; on a runner node, a consumer that stops pulling while the run floods
 * fails the stream at {@link EmbeddedRuntime#SOURCE_BUFFER} events behind while the run ends on its
 * own.
 */
class ShardedSourceTest {

  @TempDir Path workRoot;

  /**
   * The harness reads a count n and prints "line 1" … "line n", then "end" (the turn's end); or
   * reads "wide" and prints 20 lines of 30,000 characters and one of 1 MiB, then "end".
   */
  static final class FloodDriver implements ProcessDriver {
    @Override
    public Description describe() {
      return new Description(
          "flood",
          "/bin/sh",
          List.of("-c", "echo 1"),
          List.of("1"),
          InterruptMethod.SIGNAL_INT,
          List.of(),
          false,
          false,
          new LoginCheck.Unavailable("nothing to sign in to"),
          HarnessNeeds.NONE);
    }

    @Override
    public LaunchResult launch(LaunchRequest request) {
      return new LaunchResult.Planned(
          new LaunchPlan(
              List.of(
                  "-c",
                  "read -r n; if [ \"$n\" = wide ]; then"
                      + " for i in $(seq 1 20); do head -c 30000 /dev/zero | tr '\\0' w; echo;"
                      + " done; head -c 1048576 /dev/zero | tr '\\0' x; echo;"
                      + " else seq 1 \"$n\" | sed 's/^/line /'; fi; echo end"),
              List.of(),
              List.of(),
              Optional.of((request.task() + "\n").getBytes(StandardCharsets.UTF_8)),
              false,
              Optional.empty()));
    }

    @Override
    public List<Event> parse(List<String> lines) {
      List<Event> events = new ArrayList<>(lines.size());
      for (String line : lines) {
        events.add(line.equals("end") ? new Event.TurnEnd("flooded") : new Event.Text(line));
      }
      return events;
    }

    @Override
    public Event classifyExit(ExitStatus exit) {
      FailureKind kind = exit.interrupted() ? FailureKind.CANCELED : FailureKind.HARNESS_ERROR;
      return new Event.TurnFailed(new TurnFailure(kind, "exited without an answer"));
    }

    @Override
    public LoginState readLogin(LoginOutput output) {
      return new LoginState.Unknown("no login check");
    }
  }

  private CapsuleSharding onNode(ActorSystem<?> system) {
    Path root = workRoot.resolve(system.address().toString().replaceAll("\\W", "_"));
    CapsuleSharding capsules =
        CapsuleSharding.init(
            system,
            CapsuleShardingSettings.from(
                system.settings().config(),
                RunLimits.defaults(root),
                EmbeddedRuntime.noFolderDrivers()));
    if (capsules.hostsRuns()) {
      Manifest manifest =
          Manifest.builder("flood", "0.1.0")
              .builtinDriver("flood", "0.1.0")
              .envAllow("PATH")
              .build();
      capsules.register("flood", manifest, FloodDriver::new).toCompletableFuture().join();
    }
    return capsules;
  }

  private static RunRequest flood(String taskId, int lines) {
    return RunRequest.of(taskId, new CapsuleRef.Registered("flood"), Integer.toString(lines));
  }

  private void assertNoFilesDirLeft() throws IOException {
    try (Stream<Path> all = Files.walk(workRoot)) {
      assertEquals(
          List.of(),
          all.filter(p -> p.getFileName().toString().startsWith("files-")).toList(),
          "files directories left behind");
    }
  }

  /**
   * Runs {@code task} from a node without the runner role on one with it, as a source; checks the
   * run is done and its outcome the stream's last event, once; returns the events.
   */
  private List<RunEvent> acrossTwoNodes(String taskId, String task) throws Exception {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(List.of(Set.of(), Set.of("capsule-runner")))) {
      CapsuleSharding caller = onNode(cluster.node(0));
      onNode(cluster.node(1));
      Pair<RunHandle, CompletionStage<List<RunEvent>>> run =
          caller
              .source(RunRequest.of(taskId, new CapsuleRef.Registered("flood"), task))
              .toMat(Sink.seq(), Keep.both())
              .run(cluster.node(0));
      RunOutcome o = run.first().outcome().toCompletableFuture().get(120, TimeUnit.SECONDS);
      assertEquals(RunStatus.DONE, o.status(), o.message());
      List<RunEvent> events = run.second().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(new RunEvent.Finished(o), events.get(events.size() - 1));
      assertEquals(1, events.stream().filter(e -> e instanceof RunEvent.Finished).count());
      return events;
    }
  }

  private static List<String> texts(List<RunEvent> events) {
    return events.stream()
        .filter(e -> e instanceof RunEvent.TextCompleted)
        .map(e -> ((RunEvent.TextCompleted) e).text())
        .toList();
  }

  @Test
  void aShardedSourceEmitsEveryEventOnceInOrderAndCompletesAfterTheOutcome() throws Exception {
    // Across nodes a parsed batch's events travel as one message (up to 64 events): with one
    // message per event, this flood overflowed Artery's outbound queue (3072) and blocks of
    // events were dropped while the outcome still arrived. Now a dropped message fails the run
    // (E-CLU-004); here none is dropped.
    int lines = Integer.getInteger("flood.lines", 18_000);
    List<String> expected = new ArrayList<>();
    for (int i = 1; i <= lines; i++) {
      expected.add("line " + i);
    }
    assertEquals(expected, texts(acrossTwoNodes("flood-all", Integer.toString(lines))));
  }

  @Test
  void eventsTooLargeForOneRemoteMessageCrossNodesWhole() throws Exception {
    // Artery drops a message over its frame (256 KiB): the 1 MiB line's event was one, and the run
    // failed with E-CLU-004. Batches are cut by size now, and an event too large alone crosses in
    // parts.
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      expected.add("w".repeat(30_000));
    }
    expected.add("x".repeat(1 << 20));
    assertEquals(expected, texts(acrossTwoNodes("flood-wide", "wide")));
  }

  /** Asks for a few events, then never again; remembers how the stream ended. */
  private static final class Stalled implements Subscriber<RunEvent> {
    final List<RunEvent> received = java.util.Collections.synchronizedList(new ArrayList<>());
    final CompletableFuture<Throwable> ended = new CompletableFuture<>();

    @Override
    public void onSubscribe(Subscription s) {
      s.request(10);
    }

    @Override
    public void onNext(RunEvent e) {
      received.add(e);
    }

    @Override
    public void onError(Throwable t) {
      ended.complete(t);
    }

    @Override
    public void onComplete() {
      ended.complete(null);
    }
  }

  @Test
  void aShardedSourcesConsumerThatStopsPullingFailsTheStreamAndTheRunStillEnds() throws Exception {
    // One runner node that is also the caller: the flood stays in the JVM's mailboxes (see above).
    try (CapsuleClusterKit cluster = CapsuleClusterKit.start(List.of(Set.of("capsule-runner")))) {
      CapsuleSharding caller = onNode(cluster.node(0));
      Pair<RunHandle, Publisher<RunEvent>> run =
          caller
              .source(flood("flood-stalled", EmbeddedRuntime.SOURCE_BUFFER + 2_000))
              .toMat(Sink.asPublisher(AsPublisher.WITHOUT_FANOUT), Keep.both())
              .run(cluster.node(0));
      Stalled consumer = new Stalled();
      run.second().subscribe(consumer);

      Throwable failure = consumer.ended.get(120, TimeUnit.SECONDS);
      assertInstanceOf(BufferOverflowException.class, failure, "the stream failed loudly");
      assertTrue(
          failure.getMessage().contains(Integer.toString(EmbeddedRuntime.SOURCE_BUFFER)),
          failure.getMessage());
      assertEquals(10, consumer.received.size());
      RunOutcome o = run.first().outcome().toCompletableFuture().get(120, TimeUnit.SECONDS);
      assertEquals(RunStatus.DONE, o.status(), o.message());
      assertEquals(Optional.of("flooded"), o.result());
      assertNoFilesDirLeft();
    }
  }
}
