package io.capsule.runtime.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.runtime.Outcomes;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.run.CapsuleRun;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ProtocolSession} with a local listener: a parsed batch's events come as one message and
 * reach the listener one by one, in order, interleaved rightly with single events; nothing after
 * the report.
 */
class ProtocolSessionTest {

  private final ActorTestKit kit = ActorTestKit.create();
  private final TestProbe<RunEvent> listener = kit.createTestProbe();
  private final TestProbe<CapsuleRun.Command> run = kit.createTestProbe();
  private final TestProbe<ProtocolSession.Reported> reported = kit.createTestProbe();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static RunEvent text(String t) {
    return new RunEvent.TextCompleted("t", t);
  }

  @Test
  void aBatchOfEventsReachesTheListenerOneByOneInOrder() {
    ActorRef<ProtocolSession.Command> session =
        kit.spawn(
            ProtocolSession.create("t", Optional.of(listener.ref()), Optional.empty(), run.ref()));
    session.tell(new ProtocolSession.Progress(text("a")));
    session.tell(new ProtocolSession.ProgressAll(List.of(text("b"), text("c"), text("d"))));
    session.tell(new ProtocolSession.Progress(text("e")));
    session.tell(new ProtocolSession.Finish(Outcomes.done(), reported.ref()));
    session.tell(new ProtocolSession.ProgressAll(List.of(text("late"))));

    for (String t : List.of("a", "b", "c", "d", "e")) {
      assertEquals(text(t), listener.receiveMessage());
    }
    assertEquals(new RunEvent.Finished(Outcomes.done()), listener.receiveMessage());
    assertEquals("t", reported.receiveMessage().taskId());
    listener.expectNoMessage(Duration.ofMillis(100)); // the late batch is dropped
    run.expectNoMessage(Duration.ZERO);
  }

  @Test
  void withABatchListenerABatchOfEventsReachesItAsOneMessageInOrderWithTheSingleOnes() {
    TestProbe<Object> relay = kit.createTestProbe(); // one actor: single events and batches
    ActorRef<ProtocolSession.Command> session =
        kit.spawn(
            ProtocolSession.create(
                "t",
                Optional.of(relay.ref().narrow()),
                Optional.of(relay.ref().narrow()),
                Optional.empty(),
                run.ref()));
    session.tell(new ProtocolSession.Progress(text("a")));
    session.tell(new ProtocolSession.ProgressAll(List.of(text("b"), text("c"), text("d"))));
    session.tell(new ProtocolSession.Progress(text("e")));
    session.tell(new ProtocolSession.Finish(Outcomes.done(), reported.ref()));
    session.tell(new ProtocolSession.ProgressAll(List.of(text("late"))));

    assertEquals(text("a"), relay.receiveMessage());
    assertEquals(List.of(text("b"), text("c"), text("d")), relay.receiveMessage());
    assertEquals(text("e"), relay.receiveMessage());
    assertEquals(new RunEvent.Finished(Outcomes.done()), relay.receiveMessage());
    assertEquals("t", reported.receiveMessage().taskId());
    relay.expectNoMessage(Duration.ofMillis(100)); // the late batch is dropped
  }
}
