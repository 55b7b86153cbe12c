package io.capsule.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * One task's SSE stream read live on a thread of its own, across hub failures: when the stream ends
 * before the report (the node went away, or does not know the task yet) it reads again from the
 * last id it holds ({@code Last-Event-ID}), every 200 ms, until the report or its deadline. Each
 * event keeps the time it arrived, so a test can say when a task's events started flowing again.
 * Events are kept as they come, repeats included: a repeat is a finding, not noise.
 */
final class TaskReader {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** An event and when it arrived ({@link System#nanoTime()}). */
  record Arrival(HubApiClient.Sse event, long nanos) {}

  private final HttpClient http = HttpClient.newHttpClient();
  private final String apiUrl;
  private final String token;
  private final String task;
  private final List<Arrival> arrivals = new ArrayList<>();
  private final List<String> problems = new ArrayList<>();
  private final long deadline;
  private volatile boolean done;

  private TaskReader(String apiUrl, String token, String task, Duration lifetime) {
    this.apiUrl = apiUrl;
    this.token = token;
    this.task = task;
    this.deadline = System.nanoTime() + lifetime.toNanos();
  }

  /** Starts reading {@code task} from the node at {@code apiUrl}; reads for at most 6 minutes. */
  static TaskReader start(String apiUrl, String token, String task) {
    TaskReader r = new TaskReader(apiUrl, token, task, Duration.ofMinutes(6));
    Thread t = new Thread(r::run, "read-" + task);
    t.setDaemon(true);
    t.start();
    return r;
  }

  private void run() {
    while (!done && System.nanoTime() < deadline) {
      try {
        readOnce();
      } catch (Exception | AssertionError e) {
        note(e.toString());
      }
      if (!done) {
        try {
          Thread.sleep(200); // between attempts at a node that went away: no busy loop
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  private void readOnce() throws Exception {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(apiUrl + "/v1/tasks/" + task + "/events"))
            .header("Authorization", "Bearer " + token)
            .header("Last-Event-ID", Long.toString(lastId()))
            .build();
    HttpResponse<Stream<String>> resp = http.send(req, HttpResponse.BodyHandlers.ofLines());
    if (resp.statusCode() != 200) {
      resp.body().close();
      note("HTTP " + resp.statusCode());
      return;
    }
    try (Stream<String> body = resp.body()) {
      HubApiClient.readEvents(
          body,
          sse -> {
            synchronized (arrivals) {
              arrivals.add(new Arrival(sse, System.nanoTime()));
              arrivals.notifyAll();
            }
            done = "report".equals(sse.event());
            return !done;
          });
    } catch (UncheckedIOException e) {
      note("stream ended: " + e.getCause());
    }
  }

  private long lastId() {
    synchronized (arrivals) {
      return arrivals.isEmpty() ? 0 : arrivals.get(arrivals.size() - 1).event().id();
    }
  }

  private void note(String problem) {
    synchronized (problems) {
      if (problems.size() < 20) { // bounded: a node refusing for minutes says the same each time
        problems.add(problem);
      }
    }
  }

  /** Waits until an arrival matches; returns it. */
  private Arrival await(Predicate<Arrival> match, Duration within, String what)
      throws InterruptedException {
    long end = System.nanoTime() + within.toNanos();
    synchronized (arrivals) {
      while (true) {
        for (Arrival a : arrivals) {
          if (match.test(a)) {
            return a;
          }
        }
        long left = end - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(
              task
                  + ": no "
                  + what
                  + " within "
                  + within
                  + "; problems "
                  + problems()
                  + "; events "
                  + events());
        }
        arrivals.wait(Math.max(1, left / 1_000_000));
      }
    }
  }

  /** Waits until the text delta of word {@code n} has arrived. */
  void awaitWord(int n, Duration within) throws InterruptedException {
    String word = "w" + n;
    await(
        a ->
            a.event().event().equals("text")
                && a.event().data().path("delta").asText().strip().equals(word),
        within,
        "word " + word);
  }

  /** Milliseconds from {@code since} to the first event that arrived after it. */
  long firstEventAfter(long since, Duration within) throws InterruptedException {
    return Duration.ofNanos(
            await(a -> a.nanos() > since, within, "event after the kill").nanos() - since)
        .toMillis();
  }

  /** Milliseconds from {@code since} to the arrival of the task's report. */
  long reportAfter(long since, Duration within) throws InterruptedException {
    return Duration.ofNanos(
            await(a -> a.event().event().equals("report"), within, "report").nanos() - since)
        .toMillis();
  }

  /** Waits for the report; returns every event read, in arrival order. */
  List<HubApiClient.Sse> awaitReport(Duration within) throws InterruptedException {
    await(a -> a.event().event().equals("report"), within, "report");
    return events();
  }

  List<HubApiClient.Sse> events() {
    synchronized (arrivals) {
      return arrivals.stream().map(Arrival::event).toList();
    }
  }

  List<String> problems() {
    synchronized (problems) {
      return List.copyOf(problems);
    }
  }
}
