package io.capsule.hub.runner;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubStore;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.token.ProjectTokens;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.headers.Authorization;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.PeerClosedConnectionException;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.http.javadsl.model.ws.WebSocketRequest;
import org.apache.pekko.http.javadsl.model.ws.WebSocketUpgradeResponse;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;

/** Shared pieces of the socket tests: settings, tokens, a raw WebSocket peer, event capture. */
final class WsFixture {
  static final byte[] SECRET =
      "test-secret-test-secret-test-secret".getBytes(StandardCharsets.UTF_8);
  static final Duration WAIT = Duration.ofSeconds(20);

  static final ProjectTokens TOKENS = new ProjectTokens(SECRET, Duration.ofSeconds(5));

  private WsFixture() {}

  /** Short timers so the tests run in seconds, never sleeping. */
  static ProtocolConfig.Builder fast() {
    return ProtocolConfig.builder()
        .heartbeatIdle(Duration.ofMillis(300))
        .deadAfter(Duration.ofSeconds(2))
        .helloTimeout(Duration.ofSeconds(2))
        .backoffMin(Duration.ofMillis(20))
        .backoffMax(Duration.ofMillis(200))
        .backoffJitter(0.2);
  }

  static String token(String project, String runner) {
    return TOKENS.issue(project, Optional.ofNullable(runner), Duration.ofMinutes(5));
  }

  /** Takes from the queue until an element matches; the skipped ones are returned in order. */
  static <T> T await(BlockingQueue<T> q, Predicate<? super T> match, List<T> skipped)
      throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      T t = q.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
      if (t == null) {
        throw new AssertionError("nothing matched within " + WAIT + "; skipped " + skipped);
      }
      if (match.test(t)) {
        return t;
      }
      skipped.add(t);
    }
  }

  static <T> T await(BlockingQueue<T> q, Predicate<? super T> match) throws InterruptedException {
    return await(q, match, new ArrayList<>());
  }

  /** A bare WebSocket peer that sends and receives raw text, and reports the close code. */
  static final class RawPeer {
    final BlockingQueue<String> received = new LinkedBlockingQueue<>();
    final CompletableFuture<Integer> closeCode = new CompletableFuture<>();
    final CompletableFuture<WebSocketUpgradeResponse> upgrade;
    private final SourceQueueWithComplete<Message> out;
    // Answer the hub's pings (so a short dead-after keeps it) instead of staying silent.
    private volatile boolean answersPings;

    RawPeer(ActorSystem<?> system, String url, String token) {
      Materializer mat = Materializer.matFromSystem(system);
      Pair<SourceQueueWithComplete<Message>, Source<Message, NotUsed>> q =
          Source.<Message>queue(16, OverflowStrategy.backpressure()).preMaterialize(mat);
      out = q.first();
      Sink<Message, NotUsed> in =
          Flow.<Message>create()
              .watchTermination(
                  (m, done) -> {
                    done.whenComplete(
                        (d, e) -> {
                          Throwable c = e;
                          while (c != null && !(c instanceof PeerClosedConnectionException)) {
                            c = c.getCause();
                          }
                          closeCode.complete(
                              c == null
                                  ? (e == null ? 1000 : -1)
                                  : ((PeerClosedConnectionException) c).closeCode());
                        });
                    return m;
                  })
              .mapAsync(1, m -> m.asTextMessage().toStrict(5_000, mat))
              .to(Sink.foreach(t -> onText(t.getStrictText())));
      WebSocketRequest req = WebSocketRequest.create(url);
      if (token != null) {
        req = req.addHeader(Authorization.oauth2(token));
      }
      upgrade =
          Http.get(system)
              .singleWebSocketRequest(req, Flow.fromSinkAndSourceCoupled(in, q.second()), mat)
              .first()
              .toCompletableFuture();
    }

    private void onText(String text) {
      if (answersPings && text.contains("\"type\":\"ping\"")) {
        FrameCodec codec = FrameCodec.shared();
        Ping ping = (Ping) codec.decode(text, false);
        send(codec.encodeToString(new Pong(ping.nonce())));
        return;
      }
      received.add(text);
    }

    /** From now on pings are answered (and not put in {@link #received}), as a live runner does. */
    RawPeer answeringPings() {
      answersPings = true;
      return this;
    }

    /** Ends the connection from this side (a close frame): the runner went away. */
    void cut() {
      out.complete();
    }

    void send(String text) {
      out.offer(TextMessage.create(text));
    }

    /** Sends and waits until the stream took it; false once the connection is gone. */
    boolean sendAndWait(String text) throws Exception {
      try {
        return out.offer(TextMessage.create(text))
                .toCompletableFuture()
                .get(WAIT.toSeconds(), TimeUnit.SECONDS)
            == org.apache.pekko.stream.QueueOfferResult.enqueued();
      } catch (java.util.concurrent.ExecutionException e) {
        return false;
      }
    }

    int upgradeStatus() throws Exception {
      return upgrade.get(WAIT.toSeconds(), TimeUnit.SECONDS).response().status().intValue();
    }

    int awaitClose() throws Exception {
      return closeCode.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
  }

  /**
   * A store node for {@code store}, migrated first: a cluster of one that a hub's journal runs on;
   * a second one on the same files reads what the first stored, as a restarted hub process would. A
   * store node's shutdown waits up to 10 s for the task shard region to hand off (a last write the
   * closing hub sent may be buffered there, and is dropped: never acked, the runner replays it);
   * the testkit's own 10 s bound for the whole shutdown failed {@code HubRestartTest} in CI, so 30
   * s.
   */
  static ActorTestKit storeNode(HubStore store) {
    store.migrate();
    return ActorTestKit.create(
        "store",
        ConfigFactory.parseString("pekko.actor.testkit.typed.system-shutdown-default = 30s")
            .withFallback(store.pekkoConfig())
            .withFallback(HubCluster.singleNode())
            .withFallback(ConfigFactory.load()));
  }

  /**
   * Runner {@code id} of {@code project} with capsule {@code hello} and one slot, answering pings,
   * its hello's {@code resume} being {@code resume}; returned once the hub acked that hello.
   */
  static RawPeer helloRunner(
      ActorSystem<?> system, String url, String project, String id, String resume)
      throws InterruptedException {
    RawPeer p = new RawPeer(system, url, token(project, id)).answeringPings();
    p.send(
        hello(project, "ack", "error-frames", "capsule:hello", "slots:1")
            .replace("\"resume\":{}", "\"resume\":" + resume));
    await(p.received, s -> s.contains("\"type\":\"ack\""));
    return p;
  }

  /**
   * A reference hub of {@code project} on 127.0.0.1:0 with the fast settings and {@code deadAfter}
   * (raw runners answer no ping unless told to: a long one keeps them connected on a loaded
   * machine), journaling to {@code journal}.
   */
  static ReferenceHub hub(
      ActorSystem<?> system, String project, Duration deadAfter, HubJournal journal)
      throws Exception {
    return ReferenceHub.start(
            system, fast().deadAfter(deadAfter).build(), TOKENS, project, "127.0.0.1", 0, journal)
        .toCompletableFuture()
        .get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  /**
   * A raw runner {@code id} that said hello with capability {@code ack} and {@code capabilities};
   * the ack the hub answers proves the hub has taken its hello in.
   */
  static RawPeer runner(
      ActorSystem<?> system, String url, String project, String id, String... capabilities)
      throws Exception {
    RawPeer p = new RawPeer(system, url, token(project, id));
    String[] caps = new String[capabilities.length + 1];
    caps[0] = "ack";
    System.arraycopy(capabilities, 0, caps, 1, capabilities.length);
    p.send(hello(project, caps));
    await(p.received, s -> s.contains("\"type\":\"ack\""));
    return p;
  }

  static String hello(String project, String... capabilities) {
    StringBuilder caps = new StringBuilder();
    for (String c : capabilities) {
      caps.append(caps.length() == 0 ? "" : ",").append('"').append(c).append('"');
    }
    return "{\"type\":\"hello\",\"schema_version\":1,\"protocol_version\":1,\"project_id\":\""
        + project
        + "\",\"runner_version\":\"t\",\"capabilities\":["
        + caps
        + "],\"resume\":{}}";
  }
}
