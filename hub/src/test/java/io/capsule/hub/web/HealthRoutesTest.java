package io.capsule.hub.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.Await;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.ProjectTokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /healthz} and {@code /readyz} of a real hub on a real H2 file, over a real socket: both
 * answer without a token and say nothing but yes or no; {@code /readyz} turns unready when the
 * store can no longer take a write and ready again when it can.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HealthRoutesTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final ProjectTokens TOKENS =
      new ProjectTokens(
          "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8),
          Duration.ofSeconds(5));

  @TempDir Path state;

  private final HttpClient http = HttpClient.newHttpClient();
  private ActorTestKit node;
  private PersistentHubJournal journal;
  private ReferenceHub hub;

  @AfterEach
  void stop() throws Exception {
    if (hub != null) {
      hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    if (journal != null) {
      journal.close();
    }
    if (node != null) {
      node.shutdownTestKit();
    }
  }

  private void startHub() throws Exception {
    HubStore store = HubStore.h2File(state);
    store.migrate();
    node =
        ActorTestKit.create(
            "health",
            store
                .pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    journal = PersistentHubJournal.open(node.system(), WAIT);
    hub =
        ReferenceHub.start(
                node.system(),
                ProtocolConfig.builder().build(),
                TOKENS,
                "p-health",
                "127.0.0.1",
                0,
                journal)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
  }

  @Test
  void healthAndReadinessAnswerWithoutATokenAndRevealNothing() throws Exception {
    startHub();
    HttpResponse<String> health = get("/healthz");
    assertEquals(200, health.statusCode());
    assertEquals("ok\n", health.body());
    HttpResponse<String> ready = awaitStatus("/readyz", 200);
    assertEquals("ready\n", ready.body());
    assertEquals(401, get("/v1/tasks").statusCode(), "the task API still needs its token");
    assertEquals(405, post("/healthz").statusCode());
    assertEquals(404, post("/v1/no-such-route").statusCode(), "other paths: no 405 from here");
    assertEquals(404, get("/ui/../reference.conf").statusCode(), "only the page's own files");
  }

  @Test
  void readinessFollowsWhetherTheStoreTakesAWrite() throws Exception {
    startHub();
    awaitStatus("/readyz", 200);

    // The database closes and its file is no longer where the hub's store points: every new
    // connection fails (as root, a chmod would not stop the write; this does).
    Path file = state.resolve("hub.mv.db");
    Path aside = state.resolve("aside.mv.db");
    try (Connection c = DriverManager.getConnection(HubStore.h2File(state).url(), "sa", "")) {
      c.createStatement().execute("SHUTDOWN");
    }
    Files.move(file, aside);
    Files.createDirectory(file);
    HttpResponse<String> unready = awaitStatus("/readyz", 503);
    assertEquals("not ready\n", unready.body(), "the reason is logged, never served");
    assertEquals(200, get("/healthz").statusCode(), "the process is still up");

    Files.delete(file);
    Files.move(aside, file);
    awaitStatus("/readyz", 200);
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(hub.apiUrl() + path)).timeout(WAIT).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(hub.apiUrl() + path))
            .timeout(WAIT)
            .POST(HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Probes as a load balancer does, from outside, until the answer is {@code status}: readiness is
   * a fact about the store and the cluster, which change on their own time. Bounded by {@link
   * #WAIT}.
   */
  private HttpResponse<String> awaitStatus(String path, int status) throws Exception {
    HttpResponse<String> last =
        Await.until(
            () -> get(path), r -> r.statusCode() == status, WAIT, path + " answering " + status);
    assertEquals(status, last.statusCode(), path + " answered " + last.body());
    assertTrue(last.headers().firstValue("Cache-Control").orElse("").contains("no-store"));
    return last;
  }
}
