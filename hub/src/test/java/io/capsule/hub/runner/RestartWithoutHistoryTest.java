package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.store.HubJournal.Entry;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.JournalHistory;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.token.TokenScope;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hub restarted on a store (H2 file) that holds many finished tasks of many events: it reads
 * their snapshots, not their progress, and still knows each task as before: finished, every event
 * counted, its late frames refused (a replayed report acked again, a late progress not applied),
 * its whole event history served from the journal.
 */
class RestartWithoutHistoryTest {
  private static final String PROJECT = "p-restart";
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final int TASKS = 10;
  private static final int PROGRESS = 120;

  private final ActorTestKit kit = ActorTestKit.create();
  private final HttpClient http = HttpClient.newHttpClient();
  private final List<ActorTestKit> nodes = new ArrayList<>();
  private final String token =
      WsFixture.TOKENS.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(5));
  private ReferenceHub hub;

  @TempDir Path state;

  @AfterEach
  void stop() throws Exception {
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
    nodes.forEach(ActorTestKit::shutdownTestKit);
  }

  private ActorTestKit storeNode(String name) {
    HubStore store = HubStore.h2File(state);
    store.migrate();
    ActorTestKit node =
        ActorTestKit.create(
            name,
            store
                .pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    nodes.add(node);
    return node;
  }

  @Test
  void aRestartReadsSnapshotsAndTheHubStillKnowsEveryFinishedTask() throws Exception {
    RunnerKey runner = new RunnerKey(PROJECT, "r-1");
    ActorTestKit first = storeNode("first"); // the hub that ran the tasks
    PersistentHubJournal before = PersistentHubJournal.open(first.system(), TIMEOUT);
    for (int t = 0; t < TASKS; t++) {
      List<Entry> life = life(runner, "t-" + t);
      for (int i = 0; i < life.size(); i += 32) { // as a hub writes them: a few at a time
        before.appendAll(life.subList(i, Math.min(life.size(), i + 32)));
      }
    }
    first.shutdownTestKit();
    nodes.remove(first);

    PersistentHubJournal journal = PersistentHubJournal.open(storeNode("second").system(), TIMEOUT);
    assertEquals(
        TASKS,
        journal.eventsRead(),
        "one event per task (its first, for the order) of " + TASKS * (PROGRESS + 2));
    assertEquals(3 * TASKS, journal.restorable().size(), "assign, the folded run, report");
    hub =
        ReferenceHub.start(
                kit.system(),
                WsFixture.fast().deadAfter(Duration.ofSeconds(60)).build(),
                WsFixture.TOKENS,
                PROJECT,
                "127.0.0.1",
                0,
                journal)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);

    String task = get("/v1/tasks/t-9");
    assertTrue(task.contains("\"events\":" + (PROGRESS + 1) + ","), task);
    assertTrue(task.contains("\"state\":\"failed\""), task); // the report's status

    String events = get("/v1/tasks/t-9/events"); // ends with the report
    List<String> ids = events.lines().filter(l -> l.startsWith("id:")).toList();
    assertEquals(PROGRESS + 1, ids.size(), "the whole history, from the journal");
    assertEquals("id:" + (PROGRESS + 1), ids.get(ids.size() - 1).replace(" ", ""));
    assertTrue(events.contains("event:report") || events.contains("event: report"), events);

    WsFixture.RawPeer r =
        new WsFixture.RawPeer(kit.system(), hub.runnerUrl(), WsFixture.token(PROJECT, "r-1"));
    r.send(WsFixture.hello(PROJECT, "ack", "error-frames"));
    WsFixture.await(r.received, s -> s.contains("\"type\":\"ack\"")); // the hello's
    List<Entry> life = life(runner, "t-9");
    r.send(CODEC.encodeToString(life.get(life.size() - 1).frame())); // the report, replayed
    WsFixture.await(r.received, s -> s.contains("\"t-9\":" + (PROGRESS + 1)));
    TaskProgress late = ((TaskProgress) life.get(1).frame()).withSeq(PROGRESS + 2);
    r.send(CODEC.encodeToString(late));
    // A barrier the brain answers in order (a ping is answered at the node's edge, ahead of it):
    // the error frame for an unknown type comes once everything before it was handled.
    r.send("{\"type\":\"after-the-late-frame\",\"schema_version\":1}");
    WsFixture.await(r.received, s -> s.contains("E-PRO-002")); // both were handled

    String after = get("/v1/tasks/t-9");
    assertTrue(after.contains("\"events\":" + (PROGRESS + 1) + ","), "nothing applied: " + after);
    long kept = journal.recorded().stream().filter(e -> e.frame().taskId().equals("t-9")).count();
    assertEquals(PROGRESS + 2, kept, "nothing more stored for the finished task");
  }

  private String get(String path) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
                .header("Authorization", "Bearer " + token)
                .timeout(WsFixture.WAIT)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  /** A finished task's journal: its assign, {@link #PROGRESS} progress, its report. */
  private static List<Entry> life(RunnerKey runner, String task) {
    List<Entry> h = JournalHistory.of(runner, task);
    List<Entry> out = new ArrayList<>(List.of(h.get(0)));
    TaskProgress p = (TaskProgress) h.get(1).frame();
    for (int seq = 1; seq <= PROGRESS; seq++) {
      out.add(new Entry(runner, Direction.APPLIED, p.withSeq(seq)));
    }
    SequencedFrame report = h.get(3).frame().withSeq(PROGRESS + 1);
    out.add(new Entry(runner, Direction.APPLIED, report));
    return out;
  }
}
