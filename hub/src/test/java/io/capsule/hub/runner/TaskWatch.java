package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.protocol.token.TokenScope;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A task's events stream as tests read it: each event arrives as {@code "id:N event who"}, where
 * {@code who} is the progress payload's {@code who} or the report's {@code status}. Close it after
 * the case: it ends every stream it opened.
 */
final class TaskWatch implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HubCalls api;
  private final List<Stream<String>> streams = new ArrayList<>();

  TaskWatch(HubCalls api) {
    this.api = api;
  }

  /** Opens the events of {@code taskId}, from after {@code lastEventId} when given. */
  BlockingQueue<String> watch(String taskId, Optional<String> lastEventId) throws Exception {
    HttpRequest.Builder req =
        api.request(TokenScope.API, "/v1/tasks/" + taskId + "/events")
            .timeout(Duration.ofMinutes(1));
    lastEventId.ifPresent(id -> req.header("Last-Event-ID", id));
    HttpResponse<Stream<String>> r =
        api.http().send(req.build(), HttpResponse.BodyHandlers.ofLines());
    assertEquals(200, r.statusCode());
    synchronized (streams) {
      streams.add(r.body());
    }
    BlockingQueue<String> events = new LinkedBlockingQueue<>();
    CompletableFuture.runAsync(
        () -> {
          String[] event = {"", ""};
          r.body()
              .forEach(
                  l -> {
                    if (l.startsWith("event:")) {
                      event[0] = l.substring(6).trim();
                    } else if (l.startsWith("data:")) {
                      JsonNode d = read(l.substring(5));
                      event[1] = d.has("who") ? d.get("who").asText() : d.path("status").asText();
                    } else if (l.startsWith("id:")) {
                      events.add("id:" + l.substring(3).trim() + " " + event[0] + " " + event[1]);
                    }
                  });
        });
    return events;
  }

  /** The next {@code n} events of {@code q}, each within the fixture's wait. */
  static List<String> events(BlockingQueue<String> q, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String e = q.poll(WsFixture.WAIT.toSeconds(), TimeUnit.SECONDS);
      assertTrue(e != null, "event " + (i + 1) + " of " + n + " after " + out);
      out.add(e);
    }
    return out;
  }

  @Override
  public void close() {
    synchronized (streams) {
      streams.forEach(Stream::close);
    }
  }

  private static JsonNode read(String json) {
    try {
      return JSON.readTree(json);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
