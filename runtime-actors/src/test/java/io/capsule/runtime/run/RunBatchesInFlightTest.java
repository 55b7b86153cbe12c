package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * With {@code capsule.run.batches-in-flight} at its default of 2, the next batch reaches the driver
 * while one is parsed; the driver still parses one batch at a time, in order, and the events reach
 * the listener in line order. The first parse is held until the harness has written every line, so
 * later batches pile up behind it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunBatchesInFlightTest {

  private static final Duration MAX = Duration.ofSeconds(30);
  private static final int TEXTS = 1_000; // ~32 KiB: fits the pipe while the parse is held
  private ActorTestKit kit;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start(@TempDir Path workRoot) {
    kit = ActorTestKit.create();
    root = workRoot;
    fx = new RunFixture(kit, RunFixture.limits(workRoot));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aSlowFirstParseKeepsEveryEventInLineOrderAndParsesOneBatchAtATime() throws Exception {
    assertEquals(2, RunFixture.limits(Path.of("/unused")).harness().batchesInFlight());
    List<String> lines = new ArrayList<>();
    IntStream.rangeClosed(1, TEXTS)
        .forEach(i -> lines.add("{\"type\":\"text\",\"value\":\"" + i + "\"}"));
    Path pid = Files.createTempFile(root, "pid-", ".txt");
    lines.add("!pid " + pid);
    lines.add("{\"type\":\"turn-end\",\"value\":\"all\"}");
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    AtomicInteger calls = new AtomicInteger();
    CapsuleRef ref =
        fx.scenario(
            lines,
            InterruptMethod.SIGNAL_INT,
            false,
            b -> b,
            d -> new Gated(d, entered, release, running, mostAtOnce, calls));
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(fx.request(ref, "count"), probe.ref());
    List<RunEvent> events;
    try {
      assertTrue(entered.await(MAX.toSeconds(), TimeUnit.SECONDS), "parse was called");
      probe.awaitAssert(
          MAX,
          () -> {
            assertTrue(Files.size(pid) > 0, "the harness wrote every text");
            return null;
          });
    } finally {
      release.countDown();
    }
    events = RunFixture.events(probe, MAX);

    RunOutcome o = RunFixture.outcome(events);
    assertEquals(RunStatus.DONE, o.status(), o.toString());
    assertEquals(
        IntStream.rangeClosed(1, TEXTS).mapToObj(String::valueOf).toList(),
        RunFixture.only(events, RunEvent.TextCompleted.class).stream()
            .map(RunEvent.TextCompleted::text)
            .toList());
    assertEquals(1, mostAtOnce.get(), "parse calls ran one at a time");
    assertTrue(calls.get() > 2, "the lines came in " + calls.get() + " batches");
  }

  /** {@link PlayDriver} whose first parse waits for the test; counts calls running at once. */
  private record Gated(
      ProcessDriver inner,
      CountDownLatch entered,
      CountDownLatch release,
      AtomicInteger running,
      AtomicInteger mostAtOnce,
      AtomicInteger calls)
      implements ForwardingDriver {

    @Override
    public List<Event> parse(List<String> lines) {
      mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        if (calls.incrementAndGet() == 1) {
          entered.countDown();
          release.await();
        }
        return inner.parse(lines);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      } finally {
        running.decrementAndGet();
      }
    }
  }
}
