package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.events.LocalFeed;
import io.capsule.hub.events.TaskEventStream;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.hub.task.TaskEntity;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenScope;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.sse.ServerSentEvent;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task's events endpoint on a real store (H2 file) and real sockets: the history comes from the
 * task entity's journal and later events from the hub's live push, so they arrive although the
 * journal's poll is set far beyond the test's waits; {@code Last-Event-ID} resumes; and another
 * node reading the same store serves the same events and follows new ones as they are stored.
 */
class TaskEventsFromJournalTest {
  private static final String PROJECT = "p-sse";
  private static final FrameCodec CODEC = FrameCodec.shared();
  private final ActorTestKit kit = ActorTestKit.create();
  private final List<ActorTestKit> nodes = new ArrayList<>();
  private ReferenceHub hub;
  private HubCalls api;
  private final List<Stream<String>> streams = new ArrayList<>();

  @TempDir Path state;

  @AfterEach
  void stop() throws Exception {
    streams.forEach(Stream::close);
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    kit.shutdownTestKit();
    nodes.forEach(ActorTestKit::shutdownTestKit);
  }

  /** A node on the H2 file under {@code state} whose journal queries poll every {@code poll}. */
  private ActorTestKit storeNode(String name, Duration poll) {
    HubStore store = HubStore.h2File(state);
    store.migrate();
    Config config =
        ConfigFactory.parseString("jdbc-read-journal.refresh-interval = " + poll.toMillis() + "ms")
            .withFallback(store.pekkoConfig())
            .withFallback(HubCluster.singleNode())
            .withFallback(ConfigFactory.load());
    ActorTestKit node = ActorTestKit.create(name, config);
    nodes.add(node);
    return node;
  }

  /** A hub whose store polls once a minute: an event seen within the waits came by the push. */
  private WsFixture.RawPeer hubWithRunner() throws Exception {
    ActorTestKit store = storeNode("store", Duration.ofMinutes(1));
    // The raw runner answers no ping: a long dead-after keeps it connected while the store's
    // first writes warm up on a loaded machine.
    hub =
        WsFixture.hub(
            kit.system(),
            PROJECT,
            Duration.ofSeconds(60),
            PersistentHubJournal.open(store.system(), Duration.ofSeconds(20)));
    api = new HubCalls(PROJECT, hub::apiUrl);
    WsFixture.RawPeer runner =
        WsFixture.runner(kit.system(), hub.runnerUrl(), PROJECT, "r-a", "capsule:hello", "slots:2");
    HttpResponse<String> r = api.submit("{\"capsule\":\"hello\",\"goal\":\"g\",\"id\":\"t-1\"}");
    assertEquals(201, r.statusCode(), r.body());
    WsFixture.await(runner.received, s -> s.contains("task.assign"));
    return runner;
  }

  /** Opens the events stream; its {@code id:}/{@code event:} lines arrive in the queue. */
  private BlockingQueue<String> watch(Optional<String> lastEventId) throws Exception {
    HttpRequest.Builder req =
        api.request(TokenScope.API, "/v1/tasks/t-1/events").timeout(Duration.ofMinutes(1));
    lastEventId.ifPresent(id -> req.header("Last-Event-ID", id));
    HttpResponse<Stream<String>> r =
        api.http().send(req.build(), HttpResponse.BodyHandlers.ofLines());
    assertEquals(200, r.statusCode());
    streams.add(r.body());
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    CompletableFuture.runAsync(
        () ->
            r.body()
                .filter(l -> l.startsWith("id:") || l.startsWith("event:"))
                .forEach(lines::add));
    return lines;
  }

  private static String progress(long seq) {
    return CODEC.encodeToString(
        new TaskProgress("t-1", "text", JsonNodeFactory.instance.objectNode().put("i", seq))
            .withSeq(seq));
  }

  private static String report(long seq) {
    return CODEC.encodeToString(
        new TaskReport(TaskReportBody.builder("t-1", "done", new UsageSplit(1, 2, 3, 4, 5)).build())
            .withSeq(seq));
  }

  /** Asks the task (bounded) until the hub applied {@code n} events: they are in the journal. */
  private void awaitApplied(int n) throws Exception {
    api.awaitTask("t-1", t -> t.get("events").asInt() == n);
  }

  /** The next {@code n} lines of {@code lines} (each within the fixture's wait). */
  private static List<String> next(BlockingQueue<String> lines, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String l = lines.poll(WsFixture.WAIT.toSeconds(), TimeUnit.SECONDS);
      assertTrue(l != null, "line " + (i + 1) + " of " + n + " after " + out);
      out.add(l.replace(" ", ""));
    }
    return out;
  }

  @Test
  void historyComesFromTheJournalAndLaterEventsFromThePushWithoutWaitingForThePoll()
      throws Exception {
    WsFixture.RawPeer runner = hubWithRunner();
    runner.send(progress(1));
    runner.send(progress(2));
    awaitApplied(2);

    BlockingQueue<String> lines = watch(Optional.empty());
    assertEquals(List.of("event:text", "id:1", "event:text", "id:2"), next(lines, 4));
    runner.send(progress(3));
    runner.send(report(4));
    assertEquals(List.of("event:text", "id:3", "event:report", "id:4"), next(lines, 4));

    BlockingQueue<String> resumed = watch(Optional.of("2"));
    assertEquals(List.of("event:text", "id:3", "event:report", "id:4"), next(resumed, 4));
  }

  @Test
  void anotherNodeOnTheSameStoreServesTheEventsAndFollowsNewOnes() throws Exception {
    WsFixture.RawPeer runner = hubWithRunner();
    runner.send(progress(1));
    runner.send(progress(2));
    awaitApplied(2);

    // A node that never saw the task: no book, no push; only the store, polled every 100 ms.
    ActorTestKit other = storeNode("other", Duration.ofMillis(100));
    JdbcReadJournal reads =
        PersistenceQuery.get(other.system())
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    String pid = TaskEntity.KEY.name() + "|" + TaskEntity.entityId(PROJECT, "t-1");
    CompletableFuture<List<ServerSentEvent>> seen =
        TaskEventStream.of(
                other.system(),
                TaskEventStream.journal(reads, pid),
                LocalFeed.none(),
                1,
                new TaskEventStream.Settings(Duration.ofSeconds(15), 64))
            .filter(e -> e.getId().isPresent())
            .runWith(Sink.seq(), other.system())
            .toCompletableFuture();
    runner.send(progress(3));
    runner.send(report(4));
    List<String> ids =
        seen.get(WsFixture.WAIT.toSeconds(), TimeUnit.SECONDS).stream()
            .map(e -> e.getId().orElseThrow() + ":" + e.getEventType().orElse(""))
            .toList();
    assertEquals(List.of("2:text", "3:text", "4:report"), ids);
  }
}
