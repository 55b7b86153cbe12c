package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.config.diag.Code;
import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.RunnerClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A frame above the frame cap is refused by its <em>sender</em> ({@code E-PRO-005}) before it takes
 * a seq: sent, the peer would close with 1009 and the resume would replay the same frame forever,
 * wedging every task on the connection.
 */
class SenderFrameCapTest {
  private static final int CAP = 4096;
  private static final ProtocolConfig CONFIG = WsFixture.fast().frameCapBytes(CAP).build();
  private static final RunnerKey KEY = new RunnerKey("p-cap", "r-1");

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void shutdown() {
    kit.shutdownTestKit();
  }

  private static TaskProgress text(int chars) {
    return new TaskProgress(
        "T", "text", JsonNodeFactory.instance.objectNode().put("delta", "x".repeat(chars)));
  }

  private static FrameRejected refused(ExecutionException e) {
    FrameRejected r = assertInstanceOf(FrameRejected.class, e.getCause());
    assertEquals(Code.E_PRO_005, r.diagnostic().code());
    return r;
  }

  @Test
  void anOversizedFrameIsRefusedByItsSenderAndTheConnectionCarriesOn() throws Exception {
    HubServer hub =
        HubServer.create(kit.system(), CONFIG, WsFixture.TOKENS)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    hub.events().runWith(Sink.foreach(events::add), kit.system());
    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    hub.url(), "p-cap", "t", TokenSource.fixed(token("p-cap", "r-1")), CONFIG)
                .withOnState(states::add));
    client.inbound().runWith(Sink.foreach(inbox::add), kit.system());
    await(events, e -> e instanceof HubEvent.RunnerUp);

    // Hub → runner: an assignment too big for the runner never takes seq 1.
    TaskSpec huge = TaskSpec.builder("T", "feature", "g".repeat(2 * CAP)).build();
    ExecutionException tooBig =
        assertThrows(
            ExecutionException.class,
            () ->
                hub.assign(KEY, huge, "agent", Invocation.builder("capsule:x").build())
                    .toCompletableFuture()
                    .get(20, TimeUnit.SECONDS));
    assertTrue(refused(tooBig).getMessage().contains("above the frame cap of 4096"));
    TaskAssign assign =
        hub.assign(
                KEY,
                TaskSpec.builder("T", "feature", "small").build(),
                "agent",
                Invocation.builder("capsule:x").build())
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    assertEquals(1, assign.seq());
    assertEquals(1, assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS)).seq());

    // Runner → hub: the oversized frame is refused and takes no seq; the next ones arrive.
    assertEquals(1, client.send(text(10)).toCompletableFuture().get(20, TimeUnit.SECONDS).seq());
    refused(
        assertThrows(
            ExecutionException.class,
            () -> client.send(text(CAP)).toCompletableFuture().get(20, TimeUnit.SECONDS)));
    assertEquals(2, client.send(text(20)).toCompletableFuture().get(20, TimeUnit.SECONDS).seq());
    List<HubEvent> seen = new ArrayList<>();
    HubEvent.Progress second =
        (HubEvent.Progress)
            await(events, e -> e instanceof HubEvent.Progress p && p.progress().seq() == 2, seen);
    assertEquals(20, second.progress().payload().get("delta").asText().length());
    assertTrue(
        seen.stream().noneMatch(e -> e instanceof HubEvent.RunnerDown),
        "the connection was never cut: " + seen);
    assertTrue(
        states.stream().allMatch(s -> s.status() != ConnectionState.Status.DISCONNECTED),
        states.toString());
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
