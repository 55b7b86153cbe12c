package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.runtime.Outcomes;
import io.capsule.runtime.core.TraceFile;
import io.capsule.runtime.hub.ProtocolSession;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RunClosing} alone under {@link ManualTime}, with a probe as the run's session: the report
 * goes out after the clean-up, or at the clean-up's bound with {@code W-RUN-045}; a session that
 * does not answer gets the report once more, then the closing stops anyway.
 */
class RunClosingTest {

  private final ActorTestKit kit =
      ActorTestKit.create(ManualTime.config().withFallback(ConfigFactory.load()));
  private final ManualTime time = ManualTime.get(kit.system());
  private final TestProbe<ProtocolSession.Command> session = kit.createTestProbe();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static RunOutcome outcome() {
    return Outcomes.done(Set.of("cache_write"));
  }

  private ActorRef<RunClosing.Command> closing(Path dir, Executor io, AtomicBoolean pruned) {
    RunJournal journal =
        new RunJournal("t", new TraceFile(dir, Clock.systemUTC(), io), session.ref());
    return kit.spawn(
        RunClosing.create(
            new RunClosing.Handover(
                outcome(),
                journal,
                RunEnd.cleanUp(null, journal.writer(), io),
                io,
                () -> pruned.set(true))));
  }

  @Test
  void aSessionThatNeverAnswersGetsTheReportTwiceThenTheClosingStops(@TempDir Path dir) {
    AtomicBoolean pruned = new AtomicBoolean();
    ActorRef<RunClosing.Command> c = closing(dir.resolve("run"), Runnable::run, pruned);

    ProtocolSession.Finish first = session.expectMessageClass(ProtocolSession.Finish.class);
    assertEquals(outcome(), first.outcome());
    time.timePasses(RunClosing.REPORT_BOUND.minusMillis(1));
    session.expectNoMessage(Duration.ofMillis(200));
    time.timePasses(Duration.ofMillis(1));
    ProtocolSession.Finish again = session.expectMessageClass(ProtocolSession.Finish.class);
    assertEquals(outcome(), again.outcome());
    time.timePasses(RunClosing.REPORT_BOUND);
    session.expectTerminated(c);
    assertTrue(pruned.get(), "the retention ran after the report");
    session.expectNoMessage(Duration.ofMillis(200));
  }

  @Test
  void theSessionsAnswerStopsTheClosing(@TempDir Path dir) {
    ActorRef<RunClosing.Command> c =
        closing(dir.resolve("run"), Runnable::run, new AtomicBoolean());

    ProtocolSession.Finish f = session.expectMessageClass(ProtocolSession.Finish.class);
    f.replyTo().tell(new ProtocolSession.Reported("t"));
    session.expectTerminated(c);
  }

  @Test
  void aCleanUpThatNeverEndsIsGivenUpAtItsBoundAndTheReportSaysSo(@TempDir Path dir) {
    // An executor that never runs what it is given: the trace never closes.
    ActorRef<RunClosing.Command> c = closing(dir.resolve("run"), task -> {}, new AtomicBoolean());

    time.timePasses(RunClosing.CLEANUP_BOUND.minusMillis(1));
    session.expectNoMessage(Duration.ofMillis(200));
    time.timePasses(Duration.ofMillis(1));
    ProtocolSession.Progress warning = session.expectMessageClass(ProtocolSession.Progress.class);
    assertEquals("W-RUN-045", ((RunEvent.Warning) warning.event()).code());
    ProtocolSession.Finish f = session.expectMessageClass(ProtocolSession.Finish.class);
    assertTrue(f.outcome().message().contains("W-RUN-045"), f.outcome().message());
    assertEquals(Set.of("cache_write"), f.outcome().unreported(), "not reported stays so");
    f.replyTo().tell(new ProtocolSession.Reported("t"));
    session.expectTerminated(c);
  }
}
