package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

/** The reference hub's task API as the end-to-end tests use it: JSON calls and an SSE reader. */
final class HubApiClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One server-sent event of a task. */
  record Sse(long id, String event, JsonNode data) {}

  private final HttpClient http = HttpClient.newHttpClient();
  private final String apiUrl;
  private final String token;

  HubApiClient(String apiUrl, String token) {
    this.apiUrl = apiUrl;
    this.token = token;
  }

  /**
   * Parses an SSE body line by line, handing each event (keep-alives skipped) to {@code each} until
   * it answers false or the body ends.
   *
   * @throws UncheckedIOException when the stream breaks (the hub went away)
   */
  static void readEvents(Stream<String> body, java.util.function.Predicate<Sse> each)
      throws IOException {
    String event = null;
    String data = null;
    long id = -1;
    Iterator<String> lines = body.iterator();
    while (lines.hasNext()) {
      String line = lines.next();
      if (line.startsWith("data:")) {
        data = line.substring(5);
      } else if (line.startsWith("event:")) {
        event = line.substring(6);
      } else if (line.startsWith("id:")) {
        id = Long.parseLong(line.substring(3));
      } else if (line.isEmpty() && event == null) {
        data = null; // a keep-alive heartbeat, not an event
      } else if (line.isEmpty() && data != null) {
        if (!each.test(new Sse(id, event, JSON.readTree(data)))) {
          return;
        }
        data = null;
        event = null;
      }
    }
  }

  /**
   * Reads the task's events after {@code after} until the report, until {@code stop} accepts an id,
   * or until the stream ends (the hub went away): whichever comes first.
   */
  List<Sse> follow(String task, long after, LongPredicate stop) throws Exception {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(apiUrl + "/v1/tasks/" + task + "/events"))
            .header("Authorization", "Bearer " + token)
            .header("Last-Event-ID", Long.toString(after))
            .build();
    HttpResponse<Stream<String>> resp = http.send(req, HttpResponse.BodyHandlers.ofLines());
    assertEquals(200, resp.statusCode());
    List<Sse> out = new ArrayList<>();
    try (Stream<String> body = resp.body()) {
      readEvents(body, e -> out.add(e) && !"report".equals(e.event()) && !stop.test(e.id()));
    } catch (UncheckedIOException e) {
      // the hub went away mid-stream: what arrived is the answer
    }
    return out;
  }

  /**
   * For {@link #follow}: cancels the task through the API once, when an event id reaches {@code at}
   * (asserting the hub sent the cancel); never stops the reading.
   */
  LongPredicate cancelAt(String task, long at) {
    AtomicBoolean sent = new AtomicBoolean();
    return id -> {
      if (id >= at && sent.compareAndSet(false, true)) {
        JsonNode answer = post("/v1/tasks/" + task + "/cancel");
        assertTrue(answer.path("canceled").asBoolean(), answer.toString());
      }
      return false;
    };
  }

  /** Reads the task's events until the report. */
  List<Sse> follow(String task, long after) throws Exception {
    return follow(task, after, id -> false);
  }

  /** Ids 1..n with no gap or repeat, and exactly one report, the last event. */
  static void assertContiguous(List<Sse> events) {
    for (int i = 0; i < events.size(); i++) {
      assertEquals(i + 1, events.get(i).id(), "event ids must be 1..n with no gap or repeat");
    }
    assertEquals(1, events.stream().filter(e -> e.event().equals("report")).count());
    assertEquals("report", events.get(events.size() - 1).event());
  }

  JsonNode submit(String body) throws Exception {
    HttpResponse<String> r = submitRaw(body);
    assertEquals(201, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  /** POST /v1/tasks: the raw response, whatever the status. */
  HttpResponse<String> submitRaw(String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(apiUrl + "/v1/tasks"))
            .header("Authorization", "Bearer " + token)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  JsonNode get(String path) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(apiUrl + path))
                .header("Authorization", "Bearer " + token)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  /** POSTs without a body; returns the JSON answer whatever the status. */
  JsonNode post(String path) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(apiUrl + path))
                  .header("Authorization", "Bearer " + token)
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(r.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** GET with a chosen token: the raw response (for refusals). */
  HttpResponse<String> getAs(String path, String bearer) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(apiUrl + path))
            .header("Authorization", "Bearer " + bearer)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
