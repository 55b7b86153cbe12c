package io.capsule.bench.hub;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;

/**
 * One watcher of a task's server-sent events over the JDK's HTTP client, line by line as they
 * arrive: it stamps each event with {@link System#nanoTime()} when its blank line (the end of the
 * event) is read, by the event's id (the runner's seq), and checks that ids come once each and in
 * order. The arrival stamps are read after the run, so the callback does no more than record.
 *
 * <p>Threading: the HTTP client calls {@link #onNext} one line at a time; the futures and the
 * {@code arrival} array are read by the bench thread only after the futures completed.
 */
final class SseReader implements Flow.Subscriber<String> {
  /** {@code arrival[seq]}: when the event with that id was read; 0 when it never was. */
  final long[] arrival;

  /** Completes when the event with id {@link #first} was read. */
  final CompletableFuture<Void> sawFirst = new CompletableFuture<>();

  /** Completes when the event with the last expected id was read. */
  final CompletableFuture<Void> sawLast = new CompletableFuture<>();

  /** Completes when the stream ended (after the task's report), with the status code. */
  final CompletableFuture<Integer> ended = new CompletableFuture<>();

  private final long first;
  private volatile int status;
  private long id = -1;
  private String event = "";
  private long lastId;
  private String problem;

  SseReader(long first, long last) {
    this.first = first;
    this.arrival = new long[(int) last + 1];
  }

  /** The handler to send the request with: keeps the status, then reads lines. */
  HttpResponse.BodyHandler<Void> handler() {
    return info -> {
      status = info.statusCode();
      return HttpResponse.BodySubscribers.fromLineSubscriber(this);
    };
  }

  @Override
  public void onSubscribe(Flow.Subscription s) {
    s.request(Long.MAX_VALUE); // the bench reads as fast as lines come; the server paces it
  }

  @Override
  public void onNext(String line) {
    if (line.isEmpty()) {
      dispatch();
    } else if (line.startsWith("id:")) {
      id = Long.parseLong(line.substring(3).trim());
    } else if (line.startsWith("event:")) {
      event = line.substring(6).trim();
    } // data lines and ':' keepalive comments carry nothing the bench times
  }

  private void dispatch() {
    long now = System.nanoTime();
    if (event.equals("text") && id > 0) {
      if (id != lastId + 1 && problem == null) {
        problem = "event " + id + " after " + lastId;
      }
      lastId = id;
      if (id < arrival.length) {
        arrival[(int) id] = now;
      }
      if (id == first) {
        sawFirst.complete(null);
      }
      if (id == arrival.length - 1) {
        sawLast.complete(null);
      }
    } else if (event.equals("error") && problem == null) {
      problem = "an error event after " + lastId + " (the watcher fell behind?)";
    }
    id = -1;
    event = "";
  }

  /** Why this reader's events are not each expected one once and in order; null when they are. */
  String problem() {
    return status != 200 ? "HTTP " + status : problem;
  }

  @Override
  public void onError(Throwable t) {
    sawFirst.completeExceptionally(t);
    sawLast.completeExceptionally(t);
    ended.completeExceptionally(t);
  }

  @Override
  public void onComplete() {
    String why = "the stream ended (HTTP " + status + ") after event " + lastId;
    sawFirst.completeExceptionally(new IllegalStateException(why));
    sawLast.completeExceptionally(new IllegalStateException(why));
    ended.complete(status);
  }
}
