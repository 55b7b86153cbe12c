package io.capsule.protocol.ws;

import static io.capsule.protocol.ws.WsFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.token.TokenSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A runner given two hub URLs, on real sockets: when the node it is connected to ends the
 * connection, it dials the other node (not the same one again) and resumes there with its seqs: the
 * frame the first node never acknowledged is replayed with its seq, and the next frame takes the
 * next seq.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunnerFailoverTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final java.util.Set<String> HEARTBEATS = java.util.Set.of("ping", "pong");
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void aLostConnectionFailsOverToTheNextNodeAndResumesWithItsSeqs() throws Exception {
    ScriptedHub a = new ScriptedHub();
    ScriptedHub b = new ScriptedHub();
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    a.url() + "," + b.url(),
                    "p",
                    "t",
                    TokenSource.fixed("any"),
                    WsFixture.fast().build())
                .withOnState(states::add));

    assertEquals("hello", await(a.received, f -> true).path("type").asText());
    a.send(new Ack(Map.of()));
    ConnectionState onA = await(states, s -> s.status() == ConnectionState.Status.CONNECTED);
    assertEquals(Optional.of(a.url()), onA.hubUrl(), "the state names the node");
    client.send(progress(1)).toCompletableFuture().get(20, TimeUnit.SECONDS);
    JsonNode first = await(a.received, f -> f.path("type").asText().equals("task.progress"));
    assertEquals(1, first.path("seq").asLong());
    assertEquals(List.of(1L, 0L, 0L), counts(client.traffic()), "sent, replayed, reconnects");

    a.endConnection(); // never acknowledged the progress
    JsonNode hello = await(b.received, f -> true);
    assertEquals("hello", hello.path("type").asText());
    b.send(new Ack(Map.of())); // this node holds nothing of t-1 yet
    ConnectionState onB = await(states, s -> s.status() == ConnectionState.Status.CONNECTED);
    assertEquals(Optional.of(b.url()), onB.hubUrl());
    JsonNode replayed = await(b.received, f -> f.path("type").asText().equals("task.progress"));
    assertEquals(1, replayed.path("seq").asLong(), "the unacknowledged frame, with its seq");
    assertEquals(1, replayed.path("payload").path("i").asInt());
    client.send(progress(2)).toCompletableFuture().get(20, TimeUnit.SECONDS);
    JsonNode next = await(b.received, f -> f.path("type").asText().equals("task.progress"));
    assertEquals(2, next.path("seq").asLong(), "numbering goes on across nodes");
    assertEquals(List.of(2L, 1L, 1L), counts(client.traffic()), "one reconnect replayed one");

    assertEquals(1, a.upgrades.get(), "after the loss it dialled the other node, not this one");
    assertEquals(1, b.upgrades.get());
    assertTrue(a.received.isEmpty(), "the first node got nothing more: " + a.received);
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    a.close();
    b.close();
  }

  @Test
  void aDeadFirstUrlIsSkippedForTheNextOne() throws Exception {
    ScriptedHub b = new ScriptedHub();
    ScriptedHub gone = new ScriptedHub();
    String deadUrl = gone.url();
    gone.close(); // nothing listens there any more
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    deadUrl + "," + b.url(),
                    "p",
                    "t",
                    TokenSource.fixed("any"),
                    WsFixture.fast().build())
                .withOnState(states::add));
    ConnectionState refused = await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
    assertTrue(refused.reason().orElse("").contains("cannot connect"), refused.toString());
    assertEquals("hello", await(b.received, f -> true).path("type").asText());
    b.send(new Ack(Map.of()));
    await(states, s -> s.status() == ConnectionState.Status.CONNECTED);
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    b.close();
  }

  private static List<Long> counts(RunnerTraffic t) {
    return List.of(t.sent(), t.replayed(), t.reconnects());
  }

  private static TaskProgress progress(int i) {
    return new TaskProgress("t-1", "text", JsonNodeFactory.instance.objectNode().put("i", i));
  }

  /** A WebSocket endpoint that records what it receives and sends what the test tells it to. */
  private final class ScriptedHub {
    final BlockingQueue<JsonNode> received = new LinkedBlockingQueue<>();
    final AtomicInteger upgrades = new AtomicInteger();
    private volatile SourceQueueWithComplete<Message> out;
    private final ServerBinding binding;

    ScriptedHub() throws Exception {
      Materializer mat = Materializer.matFromSystem(kit.system());
      binding =
          Http.get(kit.system())
              .newServerAt("127.0.0.1", 0)
              .bind(
                  Directives.extractRequest(
                      r -> {
                        upgrades.incrementAndGet();
                        Pair<SourceQueueWithComplete<Message>, Source<Message, NotUsed>> q =
                            Source.<Message>queue(16, OverflowStrategy.backpressure())
                                .preMaterialize(mat);
                        out = q.first();
                        Sink<Message, ?> in =
                            Flow.<Message>create()
                                .mapAsync(1, m -> m.asTextMessage().toStrict(5_000, mat))
                                .map(t -> JSON.readTree(t.getStrictText()))
                                .filter(f -> !HEARTBEATS.contains(f.path("type").asText()))
                                .to(Sink.foreach(received::add));
                        return Directives.handleWebSocketMessages(
                            Flow.fromSinkAndSourceCoupled(in, q.second()));
                      }))
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS);
    }

    String url() {
      return "ws://127.0.0.1:" + binding.localAddress().getPort() + "/v1/runner";
    }

    void send(Ack ack) {
      out.offer(Wire.text(ack));
    }

    /** Completes the outbound side: the coupled flow closes the connection (close 1000). */
    void endConnection() {
      out.complete();
    }

    void close() throws Exception {
      binding
          .terminate(java.time.Duration.ofSeconds(3))
          .toCompletableFuture()
          .get(20, TimeUnit.SECONDS);
    }
  }
}
