package io.capsule.protocol.ws;

import static io.capsule.protocol.ws.WsFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.TokenSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The runner's liveness against a real socket on loopback, with the client's timers on {@link
 * ManualTime}: pings go out once per quiet interval, a hub silent for the limit is given up and the
 * next URL dialled, and a late pong within the limit keeps the connection. The hub here is a
 * scripted WebSocket peer that answers hello with an ack and otherwise says only what a test tells
 * it to.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunnerLivenessTest {
  private static final Duration PING = Duration.ofSeconds(1);
  private static final Duration SILENCE = Duration.ofSeconds(3);

  private final ActorTestKit kit = ActorTestKit.create(ManualTime.config());
  private final ManualTime time = ManualTime.get(kit.system());

  /** Per connection the hub accepted: what the runner sent, and the hub's outbound. */
  private record Peer(BlockingQueue<String> received, SourceQueueWithComplete<Message> out) {}

  private final BlockingQueue<Peer> peers = new LinkedBlockingQueue<>();
  private ServerBinding hub;
  private RunnerClient client;

  @BeforeAll
  void bind() throws Exception {
    Materializer mat = Materializer.matFromSystem(kit.system());
    hub =
        Http.get(kit.system())
            .newServerAt("127.0.0.1", 0)
            .bind(
                Directives.extractRequest(
                    r -> {
                      BlockingQueue<String> received = new LinkedBlockingQueue<>();
                      Pair<SourceQueueWithComplete<Message>, Source<Message, NotUsed>> out =
                          Source.<Message>queue(16, OverflowStrategy.backpressure())
                              .preMaterialize(mat);
                      peers.add(new Peer(received, out.first()));
                      Sink<Message, NotUsed> in =
                          Flow.<Message>create()
                              .mapAsync(1, m -> m.asTextMessage().toStrict(5_000, mat))
                              .to(Sink.foreach(t -> received.add(t.getStrictText())));
                      return Directives.handleWebSocketMessages(
                          Flow.fromSinkAndSourceCoupled(in, out.second()));
                    }))
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
  }

  @AfterEach
  void closeClient() throws Exception {
    if (client != null) {
      client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
      client = null;
    }
    peers.clear();
  }

  @AfterAll
  void shutdown() throws Exception {
    hub.unbind().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  @Test
  void pingsAQuietHubAndDialsTheNextUrlAfterTheSilenceLimit() throws Exception {
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    Peer first = connect(states);

    time.timePasses(PING); // the interval that brought the ack: alive, nothing to send
    time.timePasses(PING);
    assertTrue(await(first.received(), RunnerLivenessTest::isPing).contains("\"ping\""));
    time.timePasses(PING);
    await(first.received(), RunnerLivenessTest::isPing);
    assertTrue(first.received().isEmpty(), () -> "only the two pings: " + first.received());

    time.timePasses(PING); // three intervals without a frame: the limit
    ConnectionState lost = await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
    assertTrue(lost.reason().orElse("").contains("said nothing for 3000 ms"), lost::toString);
    assertEquals(1, client.traffic().silentHubs());

    time.timePasses(Duration.ofMillis(100)); // the back-off: dials again
    Peer second = peers.poll(20, TimeUnit.SECONDS);
    assertTrue(second != null, "the runner dialled again after giving the silent hub up");
    assertTrue(await(second.received(), m -> true).contains("\"hello\""));
  }

  @Test
  void aLatePongWithinTheLimitKeepsTheConnection() throws Exception {
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    Peer peer = connect(states);

    time.timePasses(PING); // the interval that brought the ack
    time.timePasses(PING);
    String ping1 = await(peer.received(), RunnerLivenessTest::isPing);
    time.timePasses(PING);
    await(peer.received(), RunnerLivenessTest::isPing);
    // The first ping answered two intervals late, just before the third tick would give up.
    peer.out().offer(TextMessage.create(ping1.replace("\"ping\"", "\"pong\"")));
    awaitPongs(1);

    time.timePasses(PING); // heard within the interval: alive, no ping
    time.timePasses(PING);
    time.timePasses(PING); // two quiet intervals since: pings, still short of the limit
    await(peer.received(), RunnerLivenessTest::isPing);
    await(peer.received(), RunnerLivenessTest::isPing);
    assertTrue(states.isEmpty(), () -> "no state change since connected: " + states);
    assertEquals(0, client.traffic().silentHubs());
    assertTrue(peers.isEmpty(), "no second connection");
  }

  /** Starts the client, waits for its hello, answers with an ack: it is connected. */
  private Peer connect(BlockingQueue<ConnectionState> states) throws Exception {
    String url = "ws://127.0.0.1:" + hub.localAddress().getPort() + "/v1/runner";
    ProtocolConfig config =
        ProtocolConfig.builder()
            .pingInterval(PING)
            .silenceLimit(SILENCE)
            // The idle heartbeat and the stream's own dead-after far away: only liveness acts.
            .heartbeatIdle(Duration.ofMinutes(10))
            .deadAfter(Duration.ofMinutes(20))
            .helloTimeout(Duration.ofMinutes(10))
            .backoffMin(Duration.ofMillis(100))
            .backoffMax(Duration.ofMillis(100))
            .backoffJitter(0)
            .build();
    client =
        RunnerClient.start(
            kit.system(),
            new RunnerClient.Settings(
                url, "p", "t", List.of("ack"), TokenSource.fixed("any"), config, states::add));
    Peer peer = peers.poll(20, TimeUnit.SECONDS);
    assertTrue(peer != null, "the runner dialled");
    assertTrue(await(peer.received(), m -> true).contains("\"hello\""));
    peer.out().offer(TextMessage.create("{\"type\":\"ack\",\"schema_version\":1,\"acks\":{}}"));
    await(states, s -> s.status() == ConnectionState.Status.CONNECTED);
    return peer;
  }

  /**
   * The pong has no message to wait on outside the client: look at its meter until it counts the
   * pong (a bounded wait on a fact; the client's time itself only moves with {@link #time}).
   */
  private void awaitPongs(long n) throws InterruptedException {
    long deadline = System.nanoTime() + WsFixture.WAIT.toNanos();
    while (client.traffic().pongs() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the client read no pong within " + WsFixture.WAIT);
      }
      Thread.sleep(10);
    }
  }

  private static boolean isPing(String text) {
    return text.contains("\"type\":\"ping\"");
  }
}
