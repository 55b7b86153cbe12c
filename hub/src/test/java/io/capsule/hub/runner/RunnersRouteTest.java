package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ws.Disconnect;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/runners} over real sockets: connected runners with what placement sees of them; a
 * runner that dropped is listed as disconnected within {@code capsule.hub.runner-age-out} and not
 * after it.
 */
class RunnersRouteTest {
  private static final String PROJECT = "p-runners";
  private ActorTestKit kit;
  private ReferenceHub hub;
  private HubCalls api;

  @AfterEach
  void stop() throws Exception {
    hub.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  private void start(String ageOut) throws Exception {
    kit =
        ActorTestKit.create(
            ConfigFactory.parseString("capsule.hub.runner-age-out = " + ageOut)
                .withFallback(ConfigFactory.load()));
    hub = WsFixture.hub(kit.system(), PROJECT, Duration.ofSeconds(60), HubJournal.none());
    api = new HubCalls(PROJECT, hub::apiUrl);
  }

  private void connect(String id, String... capabilities) throws Exception {
    WsFixture.runner(kit.system(), hub.runnerUrl(), PROJECT, id, capabilities);
  }

  /** Runner id → its entry in the list. */
  private TreeMap<String, JsonNode> runners() throws Exception {
    HttpResponse<String> r = api.get("/v1/runners");
    assertEquals(200, r.statusCode(), r.body());
    TreeMap<String, JsonNode> out = new TreeMap<>();
    HubCalls.json(r).forEach(n -> out.put(n.get("id").asText(), n));
    return out;
  }

  /** Drops {@code id}'s connection and asks (bounded) until the list shows it disconnected. */
  private TreeMap<String, JsonNode> dropAndAwait(String id, boolean listedAfter) throws Exception {
    assertTrue(
        hub.hub()
            .disconnect(new RunnerKey(PROJECT, id), Disconnect.CLOSE)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS));
    long deadline = System.nanoTime() + WsFixture.WAIT.toNanos();
    TreeMap<String, JsonNode> now = runners();
    while (listedAfter ? now.get(id).get("connected").asBoolean() : now.containsKey(id)) {
      assertTrue(System.nanoTime() < deadline, "the list still shows " + now.get(id));
      now = runners();
    }
    return now;
  }

  @Test
  void aDroppedRunnerIsListedDisconnectedWithinTheAgeOut() throws Exception {
    start("10m");
    connect("r-stay", "capsule:alpha", "slots:2");
    connect("r-go", "capsule:beta", "slots:1");
    TreeMap<String, JsonNode> both = runners();
    assertEquals("[r-go, r-stay]", both.keySet().toString());
    assertEquals("[\"alpha\"]", both.get("r-stay").get("capsules").toString());
    assertEquals(2, both.get("r-stay").get("slots").asInt());
    assertEquals(0, both.get("r-stay").get("running").asInt());

    TreeMap<String, JsonNode> after = dropAndAwait("r-go", true);
    assertEquals(false, after.get("r-go").get("connected").asBoolean());
    assertEquals(true, after.get("r-stay").get("connected").asBoolean());
  }

  @Test
  void aDroppedRunnerIsNoLongerListedOnceItAgedOut() throws Exception {
    start("0s");
    connect("r-stay", "capsule:alpha", "slots:2");
    connect("r-go", "capsule:beta", "slots:1");
    assertEquals("[r-go, r-stay]", runners().keySet().toString());

    TreeMap<String, JsonNode> after = dropAndAwait("r-go", false);
    assertEquals("[r-stay]", after.keySet().toString());

    connect("r-go", "capsule:beta", "slots:1");
    assertEquals("[r-go, r-stay]", runners().keySet().toString(), "listed again on reconnect");
  }
}
