package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.OrderedQueue;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A runner socket's gateway while the brain has not answered: it announces the connection again
 * every {@link RunnerGateway#REANNOUNCE_EVERY} (an announcement sent while the brain's dead node
 * was still a member is lost), stops once welcomed, and closes with 4013 only after the whole
 * welcome timeout. Manual time: no test waits on the clock.
 */
class RunnerGatewayTest {
  private static final Duration WELCOME_TIMEOUT = Duration.ofSeconds(20);

  private final ActorTestKit kit = ActorTestKit.create(ManualTime.config());
  private final ManualTime time = ManualTime.get(kit.system());
  private final TestProbe<RunnerOpened> brain = kit.createTestProbe();
  private final CompletableFuture<ServerSocket.Control> control = new CompletableFuture<>();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private final TestProbe<String> toRunner = kit.createTestProbe();

  private ActorRef<RunnerGateway.Command> spawnGateway() {
    OrderedQueue<Message> out =
        new OrderedQueue<>(
            Source.<Message>queue(8, OverflowStrategy.backpressure())
                .toMat(
                    Sink.foreach(m -> toRunner.ref().tell(m.asTextMessage().getStrictText())),
                    Keep.left())
                .run(kit.system()));
    return kit.spawn(
        RunnerGateway.create(
            "conn-1",
            new RunnerKey("demo", "r1"),
            "demo",
            brain.ref()::tell,
            WELCOME_TIMEOUT,
            out,
            control));
  }

  @Test
  void aLostAnnouncementIsRepeatedUntilTheBrainWelcomesTheSocket() {
    spawnGateway();
    RunnerOpened lost = brain.expectMessageClass(RunnerOpened.class);
    time.timePasses(RunnerGateway.REANNOUNCE_EVERY);
    RunnerOpened again = brain.expectMessageClass(RunnerOpened.class);
    assertEquals(lost, again, "the same connection, announced again");

    TestProbe<HubCore.Command> core = kit.createTestProbe();
    again.gateway().tell(new RunnerGateway.Welcome(core.ref()));
    time.timePasses(WELCOME_TIMEOUT.plusSeconds(5));
    brain.expectNoMessage(Duration.ofMillis(100));
    assertFalse(control.isDone(), "a welcomed socket stays open: " + control.getNow(null));
  }

  @Test
  void aPingIsAnsweredHereAtOnceWhileTheBrainHasNotAnswered() {
    ActorRef<RunnerGateway.Command> gateway = spawnGateway();
    brain.expectMessageClass(RunnerOpened.class);
    gateway.tell(new RunnerGateway.Pinged("7"));
    String pong = toRunner.receiveMessage();
    assertTrue(pong.contains("\"type\":\"pong\"") && pong.contains("\"7\""), pong);
    assertFalse(control.isDone(), "the socket stays open");
    brain.expectNoMessage(Duration.ofMillis(50)); // the brain never sees the ping
  }

  @Test
  void aCutOffNodeClosesTheSocketWith4014WhetherWelcomedOrNot() {
    ActorRef<RunnerGateway.Command> gateway = spawnGateway();
    brain.expectMessageClass(RunnerOpened.class);
    gateway.tell(new RunnerGateway.CutOff());
    ServerSocket.Control closed = control.join();
    assertTrue(
        closed instanceof ServerSocket.Close c
            && c.code() == CloseCodes.CUT_OFF
            && c.reason().startsWith("E-HUB-009"),
        String.valueOf(closed));
    time.timePasses(RunnerGateway.REANNOUNCE_EVERY.multipliedBy(3));
    brain.expectNoMessage(Duration.ofMillis(50)); // no more announcements once let go
  }

  @Test
  void withNoWelcomeAtAllTheSocketClosesWithTryAgainAfterTheTimeout() {
    spawnGateway();
    brain.expectMessageClass(RunnerOpened.class);
    time.timePasses(WELCOME_TIMEOUT.minusSeconds(1));
    assertFalse(control.isDone(), "still waiting for the brain");
    time.timePasses(Duration.ofSeconds(1));
    ServerSocket.Control closed = control.join();
    assertTrue(
        closed instanceof ServerSocket.Close c && c.code() == RunnerGateway.TRY_AGAIN,
        String.valueOf(closed));
  }
}
