package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
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
import io.capsule.protocol.ws.RunnerClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hub that stops (or fails to keep its journal) in the middle of a task, and a new hub on the
 * same journal and port: the runner resumes and every frame is applied exactly once, in order, over
 * both hubs; the hub's own numbering goes on where it stopped.
 */
class HubRestartTest {
  private static final String PROJECT = "p-restart";
  private static final RunnerKey KEY = new RunnerKey(PROJECT, "r-1");
  // A restart is not a runner's death: the hubs' long dead-after keeps a hub that restarts slowly
  // on a loaded machine from taking the runner's tasks back (E-HUB-008) before it reconnects.
  private static final ProtocolConfig CONFIG =
      WsFixture.fast().deadAfter(java.time.Duration.ofSeconds(60)).build();

  // The runner keeps the fast settings: its hello timeout bounds its wait for an upgrade answer,
  // and its dead-after how soon it notices a hub that went silent.
  private static final ProtocolConfig RUNNER_CONFIG = WsFixture.fast().build();

  private final ActorTestKit kit = ActorTestKit.create();
  final List<AutoCloseable> open = new ArrayList<>(); // closed last to first after each case

  @TempDir Path state;

  @AfterEach
  void shutdown() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    kit.shutdownTestKit();
  }

  /** Where the restart proof keeps the hub's journal: an H2 file under {@code state}. */
  HubStore store(Path state) {
    return HubStore.h2File(state);
  }

  /**
   * A node that keeps the hub's journal in an H2 file under {@code state}: a second one on the same
   * directory reads what the first stored, as a restarted hub process would.
   */
  private ActorTestKit storeNode() {
    ActorTestKit node = WsFixture.storeNode(store(state));
    open.add(node::shutdownTestKit);
    return node;
  }

  /** A started hub, its events as a queue, and how its event stream ended. */
  private record Hub(
      HubServer server, BlockingQueue<HubEvent> events, CompletionStage<Done> ended) {}

  private Hub start(HubJournal journal, int port) throws Exception {
    HubServer server =
        HubServer.create(kit.system(), CONFIG, WsFixture.TOKENS, journal)
            .bind("127.0.0.1", port)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    open.add(() -> server.close().toCompletableFuture().get(20, TimeUnit.SECONDS));
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    CompletionStage<Done> ended = server.events().runWith(Sink.foreach(events::add), kit.system());
    return new Hub(server, events, ended);
  }

  private RunnerClient runner(
      String url, BlockingQueue<SequencedFrame> inbox, BlockingQueue<ConnectionState> states) {
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    url,
                    PROJECT,
                    "0.1.0-test",
                    TokenSource.fixed(token(PROJECT, "r-1")),
                    RUNNER_CONFIG)
                .withOnState(states::add));
    open.add(() -> client.close().toCompletableFuture().get(20, TimeUnit.SECONDS));
    client.inbound().runWith(Sink.foreach(inbox::add), kit.system());
    return client;
  }

  private static TaskProgress note(int i) {
    return new TaskProgress("T", "text", JsonNodeFactory.instance.objectNode().put("i", i));
  }

  private static TaskReport report() {
    return new TaskReport(
        TaskReportBody.builder("T", "done", new UsageSplit(0, 0, 1, 1, 0)).build());
  }

  private static void sendAll(RunnerClient client, int from, int to) throws Exception {
    for (int i = from; i <= to; i++) {
      var sent = client.send(note(i));
      if (i % 64 == 0 || i == to) {
        sent.toCompletableFuture().get(20, TimeUnit.SECONDS); // the socket's back-pressure
      }
    }
  }

  /** The applied progress seqs in the events, up to the report (which must come once). */
  private static List<Long> appliedUntilReport(BlockingQueue<HubEvent> events) throws Exception {
    List<HubEvent> seen = new ArrayList<>();
    await(events, e -> e instanceof HubEvent.Report, seen);
    List<HubEvent> after = new ArrayList<>();
    events.drainTo(after);
    assertTrue(after.stream().noneMatch(e -> e instanceof HubEvent.Report), "one report");
    return progressSeqs(seen);
  }

  private static List<Long> progressSeqs(List<HubEvent> events) {
    return events.stream()
        .filter(e -> e instanceof HubEvent.Progress)
        .map(e -> ((HubEvent.Progress) e).progress())
        .peek(p -> assertEquals(p.seq(), p.payload().get("i").longValue()))
        .map(TaskProgress::seq)
        .toList();
  }

  private static void assertOnceInOrder(List<Long> before, List<Long> after, int total) {
    List<Long> all = new ArrayList<>(before);
    all.addAll(after);
    assertEquals(total, all.size(), "every frame applied exactly once over both hubs");
    for (int i = 0; i < total; i++) {
      assertEquals(i + 1, all.get(i), "in seq order");
    }
  }

  @Test
  void aRunnerResumesAgainstARestartedHubWithNothingLostOrAppliedTwice() throws Exception {
    ActorTestKit store1 = storeNode();
    HubJournal journal1 = PersistentHubJournal.open(store1.system(), Duration.ofSeconds(20));
    Hub hub1 = start(journal1, 0);
    int port = hub1.server().localAddress().getPort();
    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client = runner(hub1.server().url(), inbox, states);
    await(hub1.events(), e -> e instanceof HubEvent.RunnerUp);
    hub1.server()
        .assign(KEY, TaskSpec.builder("T", "feature", "count").build(), "agent", invocation())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    assertEquals(1, assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS)).seq());

    sendAll(client, 1, 300);
    // Only what happens from here: the queue still holds the first dial's CONNECTING, which once
    // let this wait pass while the runner sat connected to the closing hub.
    states.clear();
    // Mid-task. The close ends the runner's connection once the hub's last writes are kept; the
    // store's node goes after it, as when the hub's process dies.
    hub1.server().close().toCompletableFuture().get(40, TimeUnit.SECONDS);
    await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
    store1.shutdownTestKit();
    List<HubEvent> beforeEvents = new ArrayList<>();
    hub1.events().drainTo(beforeEvents);
    List<Long> before = progressSeqs(beforeEvents);
    sendAll(client, 301, 600); // while no hub is there: the runner buffers

    HubJournal journal2 = PersistentHubJournal.open(storeNode().system(), Duration.ofSeconds(20));
    assertEquals(1 + before.size(), journal2.recorded().size(), "the assign and each applied");
    Hub hub2 = start(journal2, port);
    // The new hub numbers on: the task's next hub frame is seq 2, not a second seq 1.
    TaskCancel cancel =
        hub2.server()
            .cancel(PROJECT, "T", "operator")
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS)
            .orElseThrow(() -> new AssertionError("the restored hub forgot the open task"));
    assertEquals(2, cancel.seq());
    TaskCancel got = assertInstanceOf(TaskCancel.class, inbox.poll(20, TimeUnit.SECONDS));
    assertEquals("operator", got.reason());
    client.send(report()).toCompletableFuture().get(20, TimeUnit.SECONDS);

    assertOnceInOrder(before, appliedUntilReport(hub2.events()), 600);
    assertTrue(inbox.isEmpty(), "the runner saw the assign and the cancel once each: " + inbox);
    assertTrue(hub2.server().runners(PROJECT).get(0).openTasks().isEmpty());
  }

  @Test
  void aHubThatCannotWriteItsJournalStopsAndTheNextOneLosesNothing() throws Exception {
    HubJournal memory = HubJournal.inMemory();
    HubJournal failing = new DiesAfter(memory, 101); // the assign and 100 applied frames
    Hub hub1 = start(failing, 0);
    int port = hub1.server().localAddress().getPort();
    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client = runner(hub1.server().url(), inbox, states);
    await(hub1.events(), e -> e instanceof HubEvent.RunnerUp);
    hub1.server().assign(KEY, TaskSpec.builder("T", "feature", "count").build(), "a", invocation());
    assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS));
    sendAll(client, 1, 200);

    ConnectionState cut =
        await(
            states,
            s -> s.status() == ConnectionState.Status.DISCONNECTED && s.closeCode().isPresent());
    assertEquals(CloseCodes.INTERNAL_ERROR, cut.closeCode().getAsInt());
    ExecutionException failed =
        assertThrows(
            ExecutionException.class,
            () -> hub1.ended().toCompletableFuture().get(20, TimeUnit.SECONDS));
    ProtocolException why = assertInstanceOf(ProtocolException.class, failed.getCause());
    assertEquals(Code.E_PRO_010, why.diagnostic().code());
    List<HubEvent> beforeEvents = new ArrayList<>();
    hub1.events().drainTo(beforeEvents);
    List<Long> before = progressSeqs(beforeEvents);
    // At most the 100 applied frames the journal took (a batch crossing the budget is refused
    // whole), and exactly what it kept besides the assign.
    assertTrue(before.size() <= 100 && before.size() > 0, "published: " + before.size());
    assertEquals(
        memory.recorded().size() - 1, before.size(), "published exactly what the journal kept");
    hub1.server().close().toCompletableFuture().get(20, TimeUnit.SECONDS);

    Hub hub2 = start(memory, port);
    client.send(report()).toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertOnceInOrder(before, appliedUntilReport(hub2.events()), 200);
  }

  @Test
  void aHubThatDiesAtRandomPointsOverAndOverLosesAndRepeatsNothing() throws Exception {
    int frames = 3_000;
    HubJournal memory = HubJournal.inMemory();
    Random rnd = new Random(11);
    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    List<HubEvent> applied = new ArrayList<>();
    int port = 0;
    RunnerClient client = null;
    CompletableFuture<Void> producer = null;
    Optional<TaskCancel> cancel = Optional.empty();
    for (int generation = 0; ; generation++) {
      boolean last = generation == 6;
      // Each hub but the last dies at a random append: the crash lands anywhere in its work.
      Hub hub = start(last ? memory : new DiesAfter(memory, 50 + rnd.nextInt(350)), port);
      port = hub.server().localAddress().getPort();
      if (client == null) {
        client = runner(hub.server().url(), inbox, states);
        await(hub.events(), e -> e instanceof HubEvent.RunnerUp);
        hub.server()
            .assign(KEY, TaskSpec.builder("T", "feature", "count").build(), "a", invocation());
        RunnerClient c = client;
        producer = CompletableFuture.runAsync(() -> sendQuietly(c, frames));
      }
      if (generation == 2 && cancel.isEmpty()) {
        try {
          cancel = hub.server().cancel(PROJECT, "T", "operator").toCompletableFuture().get();
        } catch (ExecutionException e) {
          assertEquals(Code.E_PRO_010, ((ProtocolException) e.getCause()).diagnostic().code());
        }
      }
      if (last) {
        producer.get(60, TimeUnit.SECONDS);
        client.send(report()).toCompletableFuture().get(20, TimeUnit.SECONDS);
        List<Long> after = appliedUntilReport(hub.events());
        assertOnceInOrder(progressSeqs(applied), after, frames);
        break;
      }
      Hub dying = hub;
      assertThrows(
          ExecutionException.class,
          () -> dying.ended().toCompletableFuture().get(30, TimeUnit.SECONDS));
      dying.events().drainTo(applied);
      dying.server().close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    assertEquals(2, cancel.orElseThrow().seq(), "the third hub numbered on from the first");
    assertEquals(1, assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS)).seq());
    assertEquals(2, assertInstanceOf(TaskCancel.class, inbox.poll(20, TimeUnit.SECONDS)).seq());
    assertTrue(inbox.isEmpty(), "each hub frame reached the runner once: " + inbox);
  }

  private static void sendQuietly(RunnerClient client, int frames) {
    try {
      sendAll(client, 1, frames);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A journal that fails (as a full disk would) once it has taken {@code budget} entries. A batch
   * is kept all or none, as the store keeps a task's entries: the hub writes what arrived together
   * in one batch, and a batch half kept would hold frames the hub never published.
   */
  private static final class DiesAfter implements HubJournal {
    private final HubJournal kept;
    private final AtomicInteger budget;

    DiesAfter(HubJournal kept, int budget) {
      this.kept = kept;
      this.budget = new AtomicInteger(budget);
    }

    @Override
    public List<Entry> recorded() {
      return kept.recorded();
    }

    @Override
    public void append(Entry entry) {
      if (budget.decrementAndGet() < 0) {
        throw new ProtocolException(Diagnostic.of(Code.E_PRO_010, "disk full (test)"));
      }
      kept.append(entry);
    }

    @Override
    public void appendAll(List<Entry> entries) {
      if (budget.addAndGet(-entries.size()) < 0) {
        throw new ProtocolException(Diagnostic.of(Code.E_PRO_010, "disk full (test)"));
      }
      kept.appendAll(entries);
    }

    @Override
    public void close() {}
  }

  private static Invocation invocation() {
    return Invocation.builder("capsule:count").build();
  }
}
