package io.capsule.protocol.ws;

import static io.capsule.protocol.ws.WsFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.TokenSource;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Hosts that accept the TCP connection and give no HTTP answer (a proxy or load balancer with no
 * backend): the runner counts the attempt as failed and dials again, whether the host closes the
 * socket at once or keeps it silent. A silent one is given up after the hello timeout, or the
 * liveness silence limit when shorter (a frozen hub's kernel still accepts), not after {@code
 * dead-after}: waiting that long made a runner that dialed during a short outage come back only
 * when the hub's own {@code dead-after} had already taken its tasks back (EmbeddedMetersTest in
 * CI).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunnerUnansweredDialTest {
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  void shutdown() {
    kit.shutdownTestKit();
  }

  /** A loopback server handing each accepted socket to {@code onAccept}, on a daemon thread. */
  private static ServerSocket serve(Consumer<Socket> onAccept) throws IOException {
    ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor =
        new Thread(
            () -> {
              while (!server.isClosed()) {
                try {
                  onAccept.accept(server.accept());
                } catch (IOException e) {
                  return;
                }
              }
            },
            "unanswering-acceptor");
    acceptor.setDaemon(true);
    acceptor.start();
    return server;
  }

  private RunnerClient dial(
      ServerSocket server, ProtocolConfig config, BlockingQueue<ConnectionState> states) {
    return RunnerClient.start(
        kit.system(),
        RunnerClient.Settings.of(
                "ws://127.0.0.1:" + server.getLocalPort() + "/v1/runner",
                "p",
                "t",
                TokenSource.fixed("any"),
                config)
            .withOnState(states::add));
  }

  @Test
  void aConnectionClosedBeforeTheUpgradeAnswerIsDialledAgain() throws Exception {
    BlockingQueue<Integer> accepted = new LinkedBlockingQueue<>();
    try (ServerSocket server =
        serve(
            s -> {
              accepted.add(1);
              try {
                s.close(); // at once, unanswered
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            })) {
      BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
      RunnerClient client = dial(server, WsFixture.fast().build(), states);
      await(accepted, a -> true);
      ConnectionState failed =
          await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
      assertEquals(1, failed.attempt(), failed.toString());
      await(accepted, a -> true); // it dialled again
      await(accepted, a -> true); // and again: each attempt ends, none hangs
      client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void anUnansweredUpgradeIsGivenUpAfterTheHelloTimeoutNotDeadAfter() throws Exception {
    List<Socket> held = new CopyOnWriteArrayList<>();
    try (ServerSocket server = serve(held::add)) { // kept open, never answered
      BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
      RunnerClient client =
          dial(
              server,
              WsFixture.fast()
                  .deadAfter(Duration.ofMinutes(5))
                  .helloTimeout(Duration.ofSeconds(1))
                  .build(),
              states);
      ConnectionState gaveUp =
          await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
      assertTrue(
          gaveUp.reason().orElse("").contains("no answer to the upgrade within 1000 ms"),
          gaveUp.toString());
      client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void anUnansweredUpgradeIsGivenUpAfterTheSilenceLimitWhenShorter() throws Exception {
    List<Socket> held = new CopyOnWriteArrayList<>();
    try (ServerSocket server = serve(held::add)) { // kept open, never answered
      BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
      RunnerClient client =
          dial(
              server,
              WsFixture.fast()
                  .deadAfter(Duration.ofMinutes(5))
                  .helloTimeout(Duration.ofMinutes(1))
                  .pingInterval(Duration.ofMillis(400))
                  .silenceLimit(Duration.ofMillis(1200))
                  .build(),
              states);
      ConnectionState gaveUp =
          await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
      assertTrue(
          gaveUp.reason().orElse("").contains("no answer to the upgrade within 1200 ms"),
          gaveUp.toString());
      client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }
}
