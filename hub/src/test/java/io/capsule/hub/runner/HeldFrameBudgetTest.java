package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.ws.CloseCodes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile runner sends up to 2,000 out-of-order frames of ~1 MiB for its own task (seq 1 never
 * comes, so each would be held): the hub holds no more than its per-runner byte budget, then drops
 * what it held and closes the connection (1008, E-PRO-013). Nothing applied is lost: the same
 * runner reconnects, sends the task in order and its progress and report are applied.
 */
class HeldFrameBudgetTest {
  private static final String PROJECT = "p-held";
  private static final long BUDGET = 8L << 20; // 8 MiB: 8 frames at the cap
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void outOfOrderFramesPastTheBudgetCloseTheConnectionAndNothingAppliedIsLost() throws Exception {
    HubServer hub =
        HubServer.create(
                kit.system(),
                WsFixture.fast()
                    .heldBytesBudget(BUDGET)
                    .deadAfter(java.time.Duration.ofSeconds(30))
                    .build(),
                WsFixture.TOKENS)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    hub.events().runWith(Sink.foreach(events::add), kit.system());
    try {
      WsFixture.RawPeer hostile =
          new WsFixture.RawPeer(kit.system(), hub.url(), token(PROJECT, "r"));
      hostile.send(hello(PROJECT, "error-frames"));
      await(events, e -> e instanceof HubEvent.RunnerUp);
      hub.assign(
              new RunnerKey(PROJECT, "r"),
              TaskSpec.builder("T", "feature", "flood").build(),
              "agent",
              Invocation.builder("capsule:x").build())
          .toCompletableFuture()
          .get(20, TimeUnit.SECONDS);
      await(hostile.received, s -> s.contains("task.assign"));

      String filler = "x".repeat((1 << 20) - 200); // the frame stays under the 1 MiB cap
      int sent = 0;
      for (int seq = 2; seq <= 2_001; seq++) {
        if (!hostile.sendAndWait(progress(seq, filler))) {
          break;
        }
        sent++;
      }
      assertEquals(CloseCodes.POLICY_VIOLATION, hostile.awaitClose());
      HubEvent.Refused refused =
          (HubEvent.Refused) await(events, e -> e instanceof HubEvent.Refused);
      assertEquals("E-PRO-013", refused.diagnostic().code().id());
      long heldAtClose = Long.parseLong(refused.diagnostic().message().split(" ")[4]);
      assertTrue(
          heldAtClose <= BUDGET + (1 << 20), "at most one frame past the budget: " + heldAtClose);
      assertTrue(sent < 2_000, "the hub closed long before 2,000 frames: " + sent);

      // The same runner again, in order: everything applies, nothing was lost.
      WsFixture.RawPeer again = new WsFixture.RawPeer(kit.system(), hub.url(), token(PROJECT, "r"));
      again.send(hello(PROJECT, "error-frames"));
      for (int seq = 1; seq <= 3; seq++) {
        again.send(progress(seq, "small"));
      }
      List<Long> applied = new ArrayList<>();
      while (applied.size() < 3) {
        HubEvent.Progress p =
            (HubEvent.Progress) await(events, e -> e instanceof HubEvent.Progress);
        applied.add(p.progress().seq());
      }
      assertEquals(List.of(1L, 2L, 3L), applied);
    } finally {
      hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  private static String progress(long seq, String text) {
    return "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":"
        + seq
        + ",\"kind\":\"text\",\"payload\":{\"delta\":\""
        + text
        + "\"}}";
  }
}
