package io.capsule.protocol.ws;

import static io.capsule.protocol.ws.WsFixture.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.token.TokenSource;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** A hub that accepts the socket and then says nothing: the runner must call it dead and redial. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunnerDeadHubTest {
  private final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  void shutdown() {
    kit.shutdownTestKit();
  }

  @Test
  void aSilentHubIsDeclaredDeadAfterTheDeadlineAndRedialled() throws Exception {
    BlockingQueue<Integer> upgrades = new LinkedBlockingQueue<>();
    ServerBinding silent =
        Http.get(kit.system())
            .newServerAt("127.0.0.1", 0)
            .bind(
                Directives.extractRequest(
                    r -> {
                      upgrades.add(1);
                      return Directives.handleWebSocketMessages(
                          Flow.fromSinkAndSourceCoupled(
                              Sink.<Message>ignore(), Source.<Message>maybe()));
                    }))
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    String url = "ws://127.0.0.1:" + silent.localAddress().getPort() + "/v1/runner";
    BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
    RunnerClient client =
        RunnerClient.start(
            kit.system(),
            RunnerClient.Settings.of(
                    url, "p", "t", TokenSource.fixed("any"), WsFixture.fast().build())
                .withOnState(states::add));

    await(upgrades, u -> true);
    ConnectionState dead = await(states, s -> s.status() == ConnectionState.Status.DISCONNECTED);
    assertTrue(dead.reason().orElse("").contains("No elements passed"), dead.toString());
    await(upgrades, u -> true); // it dialled again
    client.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    silent.unbind().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
