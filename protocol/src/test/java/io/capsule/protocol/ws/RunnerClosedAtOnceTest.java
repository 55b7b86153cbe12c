package io.capsule.protocol.ws;

import static io.capsule.protocol.ws.WsFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.protocol.token.TokenSource;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A host that accepts the TCP connection and closes it before any HTTP answer (a proxy or load
 * balancer with no backend): the runner must count that attempt as failed and dial again, not wait
 * for an upgrade answer that never comes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunnerClosedAtOnceTest {
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void aConnectionClosedBeforeTheUpgradeAnswerIsDialledAgain() throws Exception {
    BlockingQueue<Integer> accepted = new LinkedBlockingQueue<>();
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    Socket s = server.accept();
                    accepted.add(1);
                    s.close(); // at once, unanswered
                  } catch (IOException e) {
                    return;
                  }
                }
              },
              "closing-acceptor");
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
                      WsFixture.fast().build())
                  .withOnState(states::add));
      await(accepted, a -> true);
      ConnectionState failed =
          await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
      assertEquals(1, failed.attempt(), failed.toString());
      await(accepted, a -> true); // it dialled again
      await(accepted, a -> true); // and again: each attempt ends, none hangs
      client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }
}
