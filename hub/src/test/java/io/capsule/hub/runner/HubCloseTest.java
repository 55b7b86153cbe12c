package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.RunnerClient;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link HubServer#close()} completes only once the hub's brain has stopped: its started journal
 * writes are done and its runners' connections are ended. Before, close completed right after the
 * unbind while the brain still waited for a write; a caller that then closed the store (as {@code
 * HubRestartTest} does, and as a hub process does on its way out) dropped that write, and the
 * runner sat on a connection to a hub that no longer read it until the write's 20 s bound — in the
 * full suite under load, long enough to miss the next hub's cancel.
 */
class HubCloseTest {
  private static final String PROJECT = "p-close";
  private static final RunnerKey KEY = new RunnerKey(PROJECT, "r-1");
  private static final ProtocolConfig CONFIG = WsFixture.fast().build();

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void shutdown() {
    kit.shutdownTestKit();
  }

  /** An in-memory journal whose writes can be held until the test lets them through. */
  private static final class Gated implements HubJournal {
    private final HubJournal kept = HubJournal.inMemory();
    private volatile boolean holding;
    final CompletableFuture<Void> held = new CompletableFuture<>(); // a write arrived while held
    final CompletableFuture<Void> gate = new CompletableFuture<>();

    @Override
    public List<Entry> recorded() {
      return kept.recorded();
    }

    @Override
    public void append(Entry entry) {
      kept.append(entry);
    }

    @Override
    public CompletionStage<Void> appendAllAsync(List<Entry> entries) {
      if (!holding) {
        return kept.appendAllAsync(entries);
      }
      held.complete(null);
      return gate.thenCompose(v -> kept.appendAllAsync(entries));
    }

    @Override
    public void close() {}
  }

  @Test
  void closeWaitsForTheBrainsLastWriteThenEndsTheRunnersConnection() throws Exception {
    Gated journal = new Gated();
    HubServer server =
        HubServer.create(kit.system(), CONFIG, WsFixture.TOKENS, journal)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
    server.events().runWith(Sink.foreach(events::add), kit.system());
    BlockingQueue<SequencedFrame> inbox = new LinkedBlockingQueue<>();
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    server.url(),
                    PROJECT,
                    "0.1.0-test",
                    TokenSource.fixed(token(PROJECT, "r-1")),
                    CONFIG)
                .withOnState(states::add));
    client.inbound().runWith(Sink.foreach(inbox::add), kit.system());
    await(events, e -> e instanceof HubEvent.RunnerUp);
    server
        .assign(
            KEY,
            TaskSpec.builder("T", "feature", "count").build(),
            "agent",
            Invocation.builder("capsule:count").build())
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    assertInstanceOf(TaskAssign.class, inbox.poll(20, TimeUnit.SECONDS));

    journal.holding = true;
    client.send(new TaskProgress("T", "text", JsonNodeFactory.instance.objectNode().put("i", 1)));
    journal.held.get(20, TimeUnit.SECONDS); // the brain's write of that frame is in flight
    states.clear();
    CompletableFuture<Done> closed = server.close().toCompletableFuture();

    // A close that does not wait for the brain completes as soon as the port is unbound.
    assertThrows(TimeoutException.class, () -> closed.get(3, TimeUnit.SECONDS));
    assertTrue(
        states.stream().noneMatch(s -> s.status() != ConnectionState.Status.CONNECTED),
        "the runner stays connected while its frame is being written: " + states);

    journal.gate.complete(null);
    assertSame(Done.getInstance(), closed.get(20, TimeUnit.SECONDS));
    await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
    assertEquals(2, journal.recorded().size(), "the assign and the frame, both kept");
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
