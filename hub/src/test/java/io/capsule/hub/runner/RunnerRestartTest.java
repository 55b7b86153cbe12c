package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.RunnerClient;
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
 * A runner that restarts mid-task (its memory gone) gets the task again and runs it again: the
 * hub's first ack tells it where the task's frames stand, so its new frames are numbered after the
 * lost ones and applied, not dropped as their duplicates.
 */
class RunnerRestartTest {
  private static final String PROJECT = "p-runner-restart";
  private static final RunnerKey KEY = new RunnerKey(PROJECT, "r-1");
  private static final ProtocolConfig CONFIG = WsFixture.fast().build();

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void shutdown() {
    kit.shutdownTestKit();
  }

  private RunnerClient runner(String url, BlockingQueue<SequencedFrame> inbox) {
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                url, PROJECT, "0.1.0-test", TokenSource.fixed(token(PROJECT, "r-1")), CONFIG));
    client.inbound().runWith(Sink.foreach(inbox::add), kit.system());
    return client;
  }

  private static TaskProgress note(int i) {
    return new TaskProgress("T", "text", JsonNodeFactory.instance.objectNode().put("i", i));
  }

  @Test
  void aRestartedRunnerNumbersTheRerunsFramesAfterTheLostOnes() throws Exception {
    HubServer hub =
        HubServer.create(kit.system(), CONFIG, WsFixture.TOKENS)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    hub.events().runWith(Sink.foreach(events::add), kit.system());

    BlockingQueue<SequencedFrame> firstInbox = new LinkedBlockingQueue<>();
    RunnerClient first = runner(hub.url(), firstInbox);
    await(events, e -> e instanceof HubEvent.RunnerUp);
    hub.assign(
        KEY,
        TaskSpec.builder("T", "feature", "count").build(),
        "a",
        Invocation.builder("capsule:x").build());
    assertInstanceOf(TaskAssign.class, firstInbox.poll(20, TimeUnit.SECONDS));
    for (int i = 1; i <= 50; i++) {
      first.send(note(i)).toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    List<HubEvent> seen = new ArrayList<>();
    seen.add(
        await(events, e -> e instanceof HubEvent.Progress p && p.progress().seq() == 50, seen));
    first.close().toCompletableFuture().get(20, TimeUnit.SECONDS); // the runner process dies

    BlockingQueue<SequencedFrame> secondInbox = new LinkedBlockingQueue<>();
    RunnerClient second = runner(hub.url(), secondInbox);
    TaskAssign again = assertInstanceOf(TaskAssign.class, secondInbox.poll(20, TimeUnit.SECONDS));
    assertEquals("T", again.taskId(), "the unfinished task is delivered again");
    for (int i = 51; i <= 60; i++) {
      SequencedFrame sent = second.send(note(i)).toCompletableFuture().get(20, TimeUnit.SECONDS);
      assertEquals(i, sent.seq(), "numbered after the frames the hub already holds");
    }
    second
        .send(new TaskReport(TaskReportBody.builder("T", "done", UsageSplit.ZERO).build()))
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    await(events, e -> e instanceof HubEvent.Report, seen);
    List<Long> applied =
        seen.stream()
            .filter(e -> e instanceof HubEvent.Progress)
            .map(e -> ((HubEvent.Progress) e).progress())
            .peek(p -> assertEquals(p.seq(), p.payload().get("i").longValue()))
            .map(TaskProgress::seq)
            .toList();
    assertEquals(60, applied.size(), "the re-run's frames were applied, none dropped");
    assertTrue(secondInbox.isEmpty(), "the assign came once: " + secondInbox);
    second.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
