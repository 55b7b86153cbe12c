package io.capsule.protocol.ws;

import static io.capsule.protocol.ws.WsFixture.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A host that accepts the TCP connection and never answers (a proxy whose backend is cut off): the
 * runner gives the upgrade up after the hello timeout, not after {@code dead-after}. Waiting {@code
 * dead-after} there made a runner that dialed during a short outage come back only when the hub's
 * own {@code dead-after} had already taken its tasks back (EmbeddedMetersTest in CI).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunnerSilentUpgradeTest {
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void anUnansweredUpgradeIsGivenUpAfterTheHelloTimeoutNotDeadAfter() throws Exception {
    List<Socket> held = new CopyOnWriteArrayList<>();
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    held.add(server.accept()); // kept open, never answered
                  } catch (IOException e) {
                    return;
                  }
                }
              },
              "silent-acceptor");
      acceptor.setDaemon(true);
      acceptor.start();
      BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
      RunnerClient client =
          RunnerClient.start(
              kit.system(),
              RunnerClient.Settings.of(
                      "ws://127.0.0.1:" + server.getLocalPort() + "/v1/runner",
                      "p",
                      "t",
                      TokenSource.fixed("any"),
                      WsFixture.fast()
                          .deadAfter(Duration.ofMinutes(5))
                          .helloTimeout(Duration.ofSeconds(1))
                          .build())
                  .withOnState(states::add));
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
}
