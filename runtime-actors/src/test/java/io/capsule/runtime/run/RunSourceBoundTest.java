package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.BufferOverflowException;
import org.apache.pekko.stream.javadsl.AsPublisher;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The bound of {@link EmbeddedRuntime#source}: the run does not wait for the stream's consumer, so
 * a consumer that stops pulling while the run floods gets the stream failed once it is {@link
 * EmbeddedRuntime#SOURCE_BUFFER} events behind, and the run still ends on its own and leaves no
 * process and no files directory.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunSourceBoundTest {

  /** Events the consumer asks for before it stops pulling. */
  private static final int TAKEN = 10;

  private ActorTestKit kit;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start(@TempDir Path workRoot) {
    kit = ActorTestKit.create();
    root = workRoot;
    fx = new RunFixture(kit, RunFixture.limits(root));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  /** A consumer that asks for events only when told to; remembers them and how the stream ended. */
  private static final class Consumer implements Subscriber<RunEvent> {
    final List<RunEvent> received = java.util.Collections.synchronizedList(new ArrayList<>());
    final CompletableFuture<Subscription> subscription = new CompletableFuture<>();
    final CompletableFuture<Throwable> ended = new CompletableFuture<>();

    void request(long n) throws Exception {
      subscription.get(30, TimeUnit.SECONDS).request(n);
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription.complete(s);
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

  /** Materializes the run's source; its consumer asks for nothing yet. */
  private Pair<RunHandle, Consumer> consumed(CapsuleRef ref) {
    Pair<RunHandle, Publisher<RunEvent>> run =
        fx.runtime
            .source(fx.request(ref, "t"))
            .toMat(Sink.asPublisher(AsPublisher.WITHOUT_FANOUT), Pair::create)
            .run(kit.system());
    Consumer consumer = new Consumer();
    run.second().subscribe(consumer);
    return Pair.create(run.first(), consumer);
  }

  private static List<String> flood(int texts) {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < texts; i++) {
      lines.add("{\"type\":\"text\",\"value\":\"flood " + i + "\"}");
    }
    lines.add("{\"type\":\"turn-end\",\"value\":\"r\"}");
    return lines;
  }

  private CapsuleRef scenario(List<String> lines) {
    return fx.scenario(lines, InterruptMethod.SIGNAL_INT, false, b -> b);
  }

  @Test
  void aConsumerThatStopsPullingWhileTheRunFloodsFailsTheStreamAndTheRunStillCleansUp()
      throws Exception {
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    List<String> lines = new ArrayList<>(List.of("!pid " + pid));
    lines.addAll(flood(EmbeddedRuntime.SOURCE_BUFFER + 2_000));
    Pair<RunHandle, Consumer> run = consumed(scenario(lines));
    run.second().request(TAKEN); // then never again

    Throwable failure = run.second().ended.get(120, TimeUnit.SECONDS);
    assertInstanceOf(BufferOverflowException.class, failure, "the stream failed loudly");
    assertTrue(
        failure.getMessage().contains(Integer.toString(EmbeddedRuntime.SOURCE_BUFFER)),
        failure.getMessage());
    assertEquals(TAKEN, run.second().received.size(), "the consumer got what it asked for");

    // The run does not wait for its consumer, nor stop with its stream: it ends as it would.
    RunOutcome o = run.first().outcome().toCompletableFuture().get(120, TimeUnit.SECONDS);
    assertEquals(RunStatus.DONE, o.status(), o.toString());
    assertEquals("r", o.result().orElseThrow());
    RunFixture.assertDead(pid);
    fx.assertNoFilesDirLeft();
  }

  @Test
  void aConsumerBehindByLessThanTheBoundGetsEveryEventWhenItPullsAgain() throws Exception {
    // The counterpart: behind by less than SOURCE_BUFFER, nothing fails and nothing is lost.
    int texts = EmbeddedRuntime.SOURCE_BUFFER - 1_000;
    Pair<RunHandle, Consumer> run = consumed(scenario(flood(texts)));
    run.second().request(TAKEN); // then nothing until the run has ended

    RunOutcome o = run.first().outcome().toCompletableFuture().get(120, TimeUnit.SECONDS);
    assertEquals(RunStatus.DONE, o.status(), o.toString());
    assertEquals(TAKEN, run.second().received.size());
    run.second().request(Long.MAX_VALUE);
    assertEquals(null, run.second().ended.get(30, TimeUnit.SECONDS), "the stream completed");
    List<RunEvent> events = List.copyOf(run.second().received);
    assertEquals(texts, RunFixture.only(events, RunEvent.TextCompleted.class).size());
    assertEquals(o, RunFixture.outcome(events));
    fx.assertNoFilesDirLeft();
  }
}
