package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.WAIT;
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
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.CloseCodes;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.Disconnect;
import io.capsule.protocol.ws.RunnerClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** A real runner client and a real hub over 127.0.0.1, exchanging whole tasks. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunnerHubExchangeTest {
  private final ActorTestKit kit = ActorTestKit.create();
  private final BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
  private final List<TaskProgress> progress = Collections.synchronizedList(new ArrayList<>());
  private HubServer hub;

  @BeforeAll
  void bind() throws Exception {
    // Reconnects wait 150-180 ms, so a cancel issued right after a drop reaches a runner that is
    // really away; acks every 64 frames keep the runner's buffer short.
    ProtocolConfig config =
        WsFixture.fast()
            .backoffMin(Duration.ofMillis(150))
            .backoffMax(Duration.ofMillis(150))
            .build();
    hub =
        HubServer.create(kit.system(), config, WsFixture.TOKENS)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    hub.events()
        .runWith(
            Sink.foreach(
                e -> {
                  if (e instanceof HubEvent.Progress p) {
                    progress.add(p.progress());
                  } else {
                    events.add(e);
                  }
                }),
            kit.system());
  }

  @AfterAll
  void shutdown() throws Exception {
    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  private RunnerClient runner(
      String project, String runnerId, BlockingQueue<SequencedFrame> inbox) {
    RunnerClient.Settings settings =
        RunnerClient.Settings.of(
            hub.url(),
            project,
            "0.1.0-test",
            TokenSource.fixed(token(project, runnerId)),
            WsFixture.fast()
                .backoffMin(Duration.ofMillis(150))
                .backoffMax(Duration.ofMillis(150))
                .build());
    RunnerClient client = RunnerClient.start(kit.system(), settings);
    client.inbound().runWith(Sink.foreach(inbox::add), kit.system());
    return client;
  }

  private static TaskSpec spec(String id) {
    return TaskSpec.builder(id, "feature", "Say hello")
        .criterion("c1", "greets")
        .iterations(1)
        .build();
  }

  private static TaskProgress note(String task, int i) {
    return new TaskProgress(task, "text", JsonNodeFactory.instance.objectNode().put("i", i));
  }

  private static TaskReport report(String task) {
    return new TaskReport(
        TaskReportBody.builder(task, "done", new UsageSplit(1, 2, 3, 4, 5))
            .summaryBusiness("hello")
            .build());
  }

  private List<TaskProgress> progressOf(String task) {
    synchronized (progress) {
      return progress.stream().filter(p -> p.taskId().equals(task)).toList();
    }
  }

  @Test
  void runnerAndHubExchangeAWholeTask() throws Exception {
    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    RunnerClient client = runner("p-one", "r-1", inbox);
    RunnerKey key = new RunnerKey("p-one", "r-1");
    await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().equals(key));

    TaskAssign sent =
        hub.assign(key, spec("T-one"), "coder", Invocation.builder("capsule:hello").build())
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    assertEquals(1, sent.seq());
    TaskAssign got = assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS));
    assertEquals("Say hello", got.task().goal());
    assertEquals("capsule:hello", got.invocation().backend());

    org.apache.pekko.stream.javadsl.Source.range(1, 100)
        .map(i -> (SequencedFrame) note("T-one", i))
        .runWith(client.outbound(), kit.system())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    SequencedFrame r = client.send(report("T-one")).toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertEquals(101, r.seq());

    HubEvent.Report rep =
        (HubEvent.Report)
            await(
                events, e -> e instanceof HubEvent.Report x && x.report().taskId().equals("T-one"));
    assertEquals(new UsageSplit(1, 2, 3, 4, 5), rep.report().report().usage());
    List<TaskProgress> seen = progressOf("T-one");
    assertEquals(100, seen.size());
    for (int i = 0; i < 100; i++) {
      assertEquals(i + 1, seen.get(i).seq());
      assertEquals(i + 1, seen.get(i).payload().get("i").intValue());
    }
    assertTrue(hub.runners("p-one").get(0).openTasks().isEmpty());
    assertEquals(
        java.util.Optional.empty(),
        hub.cancel("p-one", "T-one", "late").toCompletableFuture().get(20, TimeUnit.SECONDS),
        "a cancel after the report changes nothing");
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void tenThousandProgressFramesSurviveRepeatedConnectionCutsExactlyOnceAndInOrder()
      throws Exception {
    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    RunnerClient client = runner("p-cut", "r-1", inbox);
    RunnerKey key = new RunnerKey("p-cut", "r-1");
    await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().equals(key));
    hub.assign(key, spec("T-cut"), "coder", Invocation.builder("capsule:hello").build());
    assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS));

    int frames = 10_000;
    Random rnd = new Random(7);
    TreeSet<Integer> cuts = new TreeSet<>();
    while (cuts.size() < 6) {
      cuts.add(500 + rnd.nextInt(frames - 1000));
    }
    Disconnect[] modes = {Disconnect.CLOSE, Disconnect.DROP, Disconnect.ABORT};
    int cutNo = 0;
    for (int i = 1; i <= frames; i++) {
      var sent = client.send(note("T-cut", i));
      if (cuts.contains(i)) {
        sent.toCompletableFuture().get(20, TimeUnit.SECONDS);
        // The runner kept sending while it was away; cut again only once it is back.
        // (The hub updates runners() before it publishes RunnerUp.)
        if (!hub.runners("p-cut").get(0).connected()) {
          await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().equals(key));
        }
        Disconnect how = modes[cutNo % modes.length];
        assertTrue(hub.disconnect(key, how).toCompletableFuture().get(20, TimeUnit.SECONDS));
        await(events, e -> e instanceof HubEvent.RunnerDown d && d.runner().equals(key));
        if (cutNo == 0) {
          // The runner is away (it waits 150 ms before redialling): this cancel is buffered and
          // must reach it through the resume.
          assertTrue(
              hub.cancel("p-cut", "T-cut", "operator")
                  .toCompletableFuture()
                  .get(20, TimeUnit.SECONDS)
                  .isPresent());
        }
        cutNo++;
      } else if (i % 256 == 0) {
        sent.toCompletableFuture().get(20, TimeUnit.SECONDS); // back-pressure from the socket
      }
    }
    client.send(report("T-cut")).toCompletableFuture().get(20, TimeUnit.SECONDS);

    await(events, e -> e instanceof HubEvent.Report x && x.report().taskId().equals("T-cut"));
    List<TaskProgress> seen = progressOf("T-cut");
    assertEquals(frames, seen.size(), "every progress frame applied exactly once");
    for (int i = 0; i < frames; i++) {
      assertEquals(i + 1, seen.get(i).seq());
      assertEquals(i + 1, seen.get(i).payload().get("i").intValue());
    }
    TaskCancel cancel = assertInstanceOf(TaskCancel.class, inbox.poll(20, TimeUnit.SECONDS));
    assertEquals(2, cancel.seq());
    assertEquals("operator", cancel.reason());
    assertTrue(inbox.isEmpty(), "the cancel arrived once: " + inbox);
    List<HubEvent> later = new ArrayList<>();
    events.drainTo(later);
    assertTrue(
        later.stream().noneMatch(e -> e instanceof HubEvent.Report),
        "the report applied once: " + later);
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void theRunnerSeesTokenRefusalsAndProjectMismatchInItsConnectionState() throws Exception {
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient.Settings base =
        RunnerClient.Settings.of(
                hub.url(), "p-x", "t", TokenSource.fixed("not-a-jwt"), WsFixture.fast().build())
            .withOnState(states::add);
    RunnerClient refused = RunnerClient.start(kit.system(), base);
    ConnectionState s = await(states, st -> st.status() == ConnectionState.Status.DISCONNECTED);
    assertEquals(401, s.closeCode().getAsInt());
    assertTrue(s.reason().orElse("").contains("E-PRO-007"), s.toString());
    refused.close().toCompletableFuture().get(20, TimeUnit.SECONDS);

    BlockingQueue<ConnectionState> states2 = new LinkedBlockingQueue<>();
    RunnerClient mismatched =
        RunnerClient.start(
            kit.system(),
            new RunnerClient.Settings(
                hub.url(),
                "p-hello",
                "t",
                List.of("ack"),
                TokenSource.fixed(token("p-token", "r")),
                WsFixture.fast().build(),
                states2::add));
    ConnectionState m = await(states2, st -> st.status() == ConnectionState.Status.DISCONNECTED);
    assertEquals(CloseCodes.PROJECT_MISMATCH, m.closeCode().getAsInt());
    mismatched.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void aTaskAssignedBeforeTheRunnerConnectsArrivesOnItsFirstConnection() throws Exception {
    RunnerKey key = new RunnerKey("p-early", "r-1");
    TaskAssign sent =
        hub.assign(key, spec("T-early"), "coder", Invocation.builder("capsule:hello").build())
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    assertEquals(1, sent.seq());
    assertTrue(hub.runners("p-early").get(0).openTasks().contains("T-early"));

    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    RunnerClient client = runner("p-early", "r-1", inbox);
    TaskAssign got = assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS));
    assertEquals("T-early", got.taskId());
    assertEquals(1, got.seq());
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void theTokenFileIsReadAgainOnEveryConnectionAttempt(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("hub-token");
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    hub.url(), "p-file", "t", TokenSource.file(file), WsFixture.fast().build())
                .withOnState(states::add));
    ConnectionState missing =
        await(states, st -> st.status() == ConnectionState.Status.DISCONNECTED);
    assertTrue(missing.reason().orElse("").contains("E-PRO-007"), missing.toString());

    Files.writeString(file, token("p-file", "r"));
    await(states, st -> st.status() == ConnectionState.Status.CONNECTED);
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void heartbeatsKeepAnIdleConnectionAlivePastTheDeadline() throws Exception {
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    hub.url(),
                    "p-idle",
                    "t",
                    TokenSource.fixed(token("p-idle", "r")),
                    WsFixture.fast().build())
                .withOnState(states::add));
    await(states, st -> st.status() == ConnectionState.Status.CONNECTED);
    // Three times the 2 s deadline without a single task frame: only pings and pongs flow.
    ConnectionState next = states.poll(6, TimeUnit.SECONDS);
    assertEquals(null, next, "the connection stayed up");
    assertEquals(ConnectionState.Status.CONNECTED, client.connectionState().status());
    client.close().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }
}
