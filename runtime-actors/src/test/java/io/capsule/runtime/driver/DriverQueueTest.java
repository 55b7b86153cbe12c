package io.capsule.runtime.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.RunLimits;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Calls that arrive while one runs (the run keeps up to {@code batches-in-flight} parses at the
 * driver): they run one at a time in arrival order, each under its own deadline from the moment it
 * starts, and a failure drops the ones still waiting. Deadlines under {@link ManualTime}; the
 * driver's calls block on a semaphore the test releases, so nothing sleeps.
 */
class DriverQueueTest {

  private static final Duration DEADLINE = Duration.ofSeconds(10);
  private static final Duration WAIT = Duration.ofSeconds(20);

  private final ActorTestKit kit =
      ActorTestKit.create(ManualTime.config().withFallback(ConfigFactory.load()));
  private final ManualTime time = ManualTime.get(kit.system());

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  /**
   * Parses each line into a {@code text} event, one permit per call; the line {@code null} makes
   * the call answer nothing (a driver failure). Records which call started and how many ran at
   * once.
   */
  private static final class GatedDriver implements ProcessDriver {
    final Semaphore permits = new Semaphore(0);
    final BlockingQueue<String> started = new LinkedBlockingQueue<>();
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger mostAtOnce = new AtomicInteger();

    @Override
    public List<Event> parse(List<String> lines) {
      mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        started.add(String.join(",", lines));
        permits.acquireUninterruptibly();
        return lines.contains("null")
            ? null
            : lines.stream().map(l -> (Event) new Event.Text(l)).toList();
      } finally {
        running.decrementAndGet();
      }
    }

    @Override
    public Description describe() {
      throw new UnsupportedOperationException("not asked here");
    }

    @Override
    public LaunchResult launch(LaunchRequest request) {
      throw new UnsupportedOperationException("not asked here");
    }

    @Override
    public Event classifyExit(ExitStatus exit) {
      throw new UnsupportedOperationException("not asked here");
    }

    @Override
    public LoginState readLogin(LoginOutput output) {
      throw new UnsupportedOperationException("not asked here");
    }

    @Override
    public void close() {}
  }

  private ActorRef<Driver.Command> spawn(GatedDriver d) {
    return kit.spawn(Driver.create(() -> d, DEADLINE, RunLimits.BLOCKING_DISPATCHER));
  }

  private static List<Event> texts(String... lines) {
    return List.of(lines).stream().map(l -> (Event) new Event.Text(l)).toList();
  }

  private static String nextStarted(GatedDriver d) throws InterruptedException {
    return d.started.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  @Test
  void parsesSentWhileOneRunsRunAfterItInOrderEachUnderItsOwnDeadline() throws Exception {
    GatedDriver d = new GatedDriver();
    ActorRef<Driver.Command> driver = spawn(d);
    TestProbe<Driver.Reply> replies = kit.createTestProbe();
    driver.tell(new Driver.Parse(List.of("a1", "a2"), replies.getRef()));
    driver.tell(new Driver.Parse(List.of("b1"), replies.getRef()));
    driver.tell(new Driver.Parse(List.of("c1"), replies.getRef()));

    assertEquals("a1,a2", nextStarted(d));
    assertNull(d.started.poll(200, TimeUnit.MILLISECONDS), "b started while a ran");
    time.timePasses(DEADLINE.minusSeconds(1));
    replies.expectNoMessage(Duration.ofMillis(200));
    d.permits.release();
    assertEquals(texts("a1", "a2"), replies.expectMessageClass(Driver.Parsed.class, WAIT).events());

    // b waited through most of a deadline behind a; its own deadline starts only now.
    assertEquals("b1", nextStarted(d));
    time.timePasses(DEADLINE.minusSeconds(1));
    replies.expectNoMessage(Duration.ofMillis(200));
    d.permits.release();
    assertEquals(texts("b1"), replies.expectMessageClass(Driver.Parsed.class, WAIT).events());

    // c overruns its own deadline: the failure names parse.
    assertEquals("c1", nextStarted(d));
    Driver.Reply failed = null;
    for (int step = 0; step < 30 && failed == null; step++) {
      time.timePasses(Duration.ofSeconds(1));
      failed = pollReply(replies);
    }
    assertInstanceOf(Driver.Failed.class, failed);
    String message = ((Driver.Failed) failed).diagnostic().message();
    assertTrue(message.contains("parse") && message.contains("overran"), message);
    replies.expectTerminated(driver, WAIT);
    assertEquals(1, d.mostAtOnce.get(), "calls ran one at a time");
    d.permits.release();
  }

  @Test
  void aFailedCallDropsTheCallsWaitingBehindItUnanswered() throws Exception {
    GatedDriver d = new GatedDriver();
    ActorRef<Driver.Command> driver = spawn(d);
    TestProbe<Driver.Reply> replies = kit.createTestProbe();
    driver.tell(new Driver.Parse(List.of("null"), replies.getRef()));
    driver.tell(new Driver.Parse(List.of("later"), replies.getRef()));

    assertEquals("null", nextStarted(d));
    d.permits.release();
    Driver.Failed f = replies.expectMessageClass(Driver.Failed.class, WAIT);
    assertEquals("E-RUN-034", f.diagnostic().code().id());
    replies.expectTerminated(driver, WAIT);
    replies.expectNoMessage(Duration.ofMillis(200));
    assertNull(d.started.poll(200, TimeUnit.MILLISECONDS), "the waiting call ran");
  }

  /** The next reply within a short real-time window, or null. */
  private static Driver.Reply pollReply(TestProbe<Driver.Reply> replies) {
    try {
      return replies.receiveMessage(Duration.ofMillis(100));
    } catch (AssertionError none) {
      return null;
    }
  }
}
