package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.ws.CloseCodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The brain never waits for its store, and nothing reveals an entry before the store has it: over
 * real sockets, with a journal whose writes complete only when the test says so. While a write is
 * pending the brain serves other runners; the frames whose entries it carries have no ack, no
 * event, no pong behind them until it completes; what arrives meanwhile, from any connection, goes
 * into the next write; a failed write closes every connection with 1011 and acks nothing.
 */
class AsyncJournalTest {
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final String PROJECT = "p-async";

  private final ActorTestKit kit = ActorTestKit.create();
  private final HeldJournal journal = new HeldJournal();
  private final BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
  private HubServer hub;
  private CompletionStage<Done> eventsDone;

  @BeforeEach
  void start() throws Exception {
    hub =
        HubServer.create(
                kit.system(), WsFixture.fast().ackEvery(1).build(), WsFixture.TOKENS, journal)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    eventsDone = hub.events().runWith(Sink.foreach(events::add), kit.system());
  }

  @AfterEach
  void stop() throws Exception {
    journal.releaseAll();
    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  @Test
  void theBrainServesOthersWhileAWriteIsPendingAndRevealsNothingBeforeIt() throws Exception {
    WsFixture.RawPeer a = connect("ra");
    placeTask(a, "ra", "TA");
    a.send(progress("TA", 1));
    HeldJournal.Write w = journal.next();
    assertEquals(List.of(1L), seqs(w), "seq 1 is being written");

    // Another runner is served meanwhile: its hello is answered, it is published, its ping ponged.
    WsFixture.RawPeer b = connect("rb");
    b.send("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"b\"}");
    assertEquals("b", assertInstanceOf(Pong.class, next(b)).nonce());
    assertTrue(hub.runners(PROJECT).stream().filter(RunnerInfo::connected).count() == 2);

    // Nothing of seq 1 is visible yet: the write is still pending (released only below). (A ping
    // proves nothing here: the node's edge answers it, not the brain, see runner liveness.)
    assertTrue(a.received.isEmpty(), "no ack before the write: " + a.received);
    assertTrue(
        events.stream().noneMatch(e -> e instanceof HubEvent.Progress), "no event: " + events);

    w.complete();
    Ack ack = assertInstanceOf(Ack.class, next(a));
    assertEquals(1L, ack.acks().get("TA"));
    HubEvent.Progress p = (HubEvent.Progress) await(events, e -> e instanceof HubEvent.Progress);
    assertEquals(1L, p.progress().seq());
    a.send("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"idle\"}");
    assertEquals("idle", assertInstanceOf(Pong.class, next(a)).nonce(), "no write pending now");
  }

  @Test
  void framesArrivingDuringAWriteFromAnyConnectionGoIntoTheNextWrite() throws Exception {
    WsFixture.RawPeer a = connect("ra");
    WsFixture.RawPeer b = connect("rb");
    placeTask(a, "ra", "TA");
    placeTask(b, "rb", "TB");
    HubTraffic traffic = HubTraffic.get(kit.system());
    long writesBefore = traffic.journalWriteCount();
    a.send(progress("TA", 1));
    HeldJournal.Write first = journal.next();
    for (int seq = 2; seq <= 6; seq++) {
      a.send(progress("TA", seq));
    }
    for (int seq = 1; seq <= 5; seq++) {
      b.send(progress("TB", seq));
    }
    // The brain has read all eleven (seq 1 in flight, ten waiting), and wrote only once so far.
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(20),
            () -> {
              assertEquals(11, traffic.journalPendingCount());
              return null;
            });
    assertTrue(journal.writes.isEmpty(), "no second write while the first is in flight");
    first.complete();
    HeldJournal.Write second = journal.next();
    assertEquals(10, second.entries().size(), "every frame that arrived meanwhile, in one write");
    assertEquals(List.of(2L, 3L, 4L, 5L, 6L), seqsOf(second, "TA"), "each task in order");
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L), seqsOf(second, "TB"));
    for (String text : a.received) {
      Frame f = CODEC.decode(text, false);
      assertFalse(
          f instanceof Ack ack && ack.acks().getOrDefault("TA", 0L) > 1, "acked early: " + text);
    }
    second.complete();
    awaitAck(a, "TA", 6);
    awaitAck(b, "TB", 5);
    assertEquals(2, traffic.journalWriteCount() - writesBefore, "2 writes for 11 frames");
    assertEquals(11, journal.kept.size() - 2, "every frame stored (besides the 2 assigns)");
  }

  @Test
  void aFailedWriteClosesWith1011AndAcksNothingItCarried() throws Exception {
    WsFixture.RawPeer a = connect("ra");
    placeTask(a, "ra", "TA");
    a.send(progress("TA", 1));
    journal.next().fail(new ProtocolException(Diagnostic.of(Code.E_PRO_010, "disk full (test)")));
    assertEquals(CloseCodes.INTERNAL_ERROR, a.awaitClose());
    for (String text : a.received) {
      Frame f = CODEC.decode(text, false);
      assertFalse(f instanceof Ack ack && ack.acks().containsKey("TA"), "acked: " + text);
    }
    ExecutionException failed =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class,
            () -> eventsDone.toCompletableFuture().get(20, TimeUnit.SECONDS));
    ProtocolException cause = assertInstanceOf(ProtocolException.class, failed.getCause());
    assertEquals(Code.E_PRO_010, cause.diagnostic().code());
    assertTrue(
        events.stream().noneMatch(e -> e instanceof HubEvent.Progress), "published: " + events);
  }

  /** Connects, says hello with acks and takes the hello's ack. */
  private WsFixture.RawPeer connect(String runner) throws Exception {
    // The hub pings its runners (runner liveness): answered, as a live runner does.
    WsFixture.RawPeer p =
        new WsFixture.RawPeer(kit.system(), hub.url(), token(PROJECT, runner)).answeringPings();
    p.send(hello(PROJECT, Capabilities.ACK));
    assertInstanceOf(Ack.class, next(p));
    return p;
  }

  /** Assigns a task: its write completes, then (only then) the runner gets it. */
  private void placeTask(WsFixture.RawPeer p, String runner, String taskId) throws Exception {
    CompletableFuture<TaskAssign> sent =
        hub.assign(
                new RunnerKey(PROJECT, runner),
                TaskSpec.builder(taskId, "feature", "async").build(),
                "agent",
                Invocation.builder("capsule:x").build())
            .toCompletableFuture();
    HeldJournal.Write w = journal.next();
    assertFalse(sent.isDone(), "the assign is not answered before its write completes");
    assertTrue(p.received.isEmpty(), "nor sent: " + p.received);
    w.complete();
    assertEquals(1, sent.get(20, TimeUnit.SECONDS).seq());
    assertEquals(taskId, assertInstanceOf(TaskAssign.class, next(p)).taskId());
  }

  /** Reads the runner's frames until an ack says the hub holds {@code seq} of the task. */
  private static void awaitAck(WsFixture.RawPeer p, String taskId, long seq) throws Exception {
    long held = 0;
    while (held < seq) {
      if (next(p) instanceof Ack ack) {
        held = ack.acks().getOrDefault(taskId, 0L);
      }
    }
    assertEquals(seq, held);
  }

  private static Frame next(WsFixture.RawPeer p) throws InterruptedException {
    String text = p.received.poll(20, TimeUnit.SECONDS);
    assertNotNull(text, "nothing received within 20 s");
    return CODEC.decode(text, false);
  }

  private static String progress(String taskId, long seq) {
    return "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\""
        + taskId
        + "\",\"seq\":"
        + seq
        + ",\"kind\":\"text\",\"payload\":{}}";
  }

  private static List<Long> seqs(HeldJournal.Write w) {
    return w.entries().stream().map(e -> e.frame().seq()).toList();
  }

  private static List<Long> seqsOf(HeldJournal.Write w, String taskId) {
    return w.entries().stream()
        .filter(e -> e.frame().taskId().equals(taskId))
        .map(e -> e.frame().seq())
        .toList();
  }

  /**
   * A journal whose writes complete when the test says: each {@link #appendAllAsync} is handed to
   * the test as a {@link Write}, and its entries are kept when it completes.
   */
  static final class HeldJournal implements HubJournal {
    record Write(List<Entry> entries, CompletableFuture<Void> done, List<Entry> kept) {
      void complete() {
        kept.addAll(entries);
        done.complete(null);
      }

      void fail(Throwable why) {
        done.completeExceptionally(why);
      }
    }

    final BlockingQueue<Write> writes = new LinkedBlockingQueue<>();
    final List<Entry> kept = java.util.Collections.synchronizedList(new ArrayList<>());
    private final List<Write> all = java.util.Collections.synchronizedList(new ArrayList<>());

    /** The next write the brain started (bounded wait). */
    Write next() throws InterruptedException {
      Write w = writes.poll(20, TimeUnit.SECONDS);
      assertNotNull(w, "no write within 20 s");
      return w;
    }

    /** Completes whatever is still pending, so the hub can stop. */
    void releaseAll() {
      synchronized (all) {
        all.stream().filter(w -> !w.done().isDone()).forEach(Write::complete);
      }
    }

    @Override
    public List<Entry> recorded() {
      return List.of();
    }

    @Override
    public void append(Entry entry) {
      throw new UnsupportedOperationException("the brain writes with appendAllAsync");
    }

    @Override
    public CompletionStage<Void> appendAllAsync(List<Entry> entries) {
      Write w = new Write(List.copyOf(entries), new CompletableFuture<>(), kept);
      all.add(w);
      writes.add(w);
      return w.done();
    }

    @Override
    public void close() {}
  }
}
