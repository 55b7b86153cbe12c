package io.capsule.hub.http;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.stream.javadsl.Flow;

/**
 * What the {@code GuardedBinding*Test} classes share: one actor system per test class, a {@link
 * GuardedBinding} on {@code 127.0.0.1:0} whose {@code /ping} answers pong and {@code /ws} is a
 * WebSocket echo (unbound after each test), a timer for waits, and a timed ping.
 */
final class GuardedBindingFixture {
  private final ActorSystem<Void> system;
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
  private GuardedBinding binding;

  GuardedBindingFixture(String systemName) {
    system = ActorSystem.create(Behaviors.empty(), systemName);
  }

  /** {@code /ping} answers pong; {@code /ws} is a WebSocket echo. */
  private Flow<HttpRequest, HttpResponse, ?> handler() {
    return Flow.of(HttpRequest.class)
        .map(
            request -> {
              var upgrade = request.getAttribute(AttributeKeys.webSocketUpgrade);
              if (upgrade.isPresent()) {
                return upgrade.get().handleMessagesWith(Flow.of(Message.class));
              }
              request.discardEntityBytes(system);
              return request.getUri().path().equals("/ping")
                  ? HttpResponse.create().withEntity("pong")
                  : HttpResponse.create().withStatus(StatusCodes.NOT_FOUND);
            });
  }

  GuardedBinding bind(GuardedBinding.Limits limits) throws Exception {
    binding =
        GuardedBinding.bind(system, "127.0.0.1", 0, handler(), limits)
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    return binding;
  }

  static GuardedBinding.Limits limits(Duration header, Duration idle, int total, int perAddress) {
    return new GuardedBinding.Limits(header, idle, total, perAddress);
  }

  /** Unbinds the binding of the test that ended, if any. */
  void unbind() throws Exception {
    if (binding != null) {
      binding.terminate().toCompletableFuture().get(10, TimeUnit.SECONDS);
      binding = null;
    }
  }

  /** Ends the timer and the actor system (after the class's last test). */
  void stop() throws Exception {
    timers.shutdownNow();
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  record Ping(int status, long millis) {}

  Ping ping(GuardedBinding b) throws IOException {
    long t0 = System.nanoTime();
    try (Socket s = HttpWire.connect(b, "127.0.0.1")) {
      HttpWire.write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n");
      String answer = HttpWire.readToEnd(s, Duration.ofSeconds(10));
      int status = answer.length() >= 12 ? Integer.parseInt(answer.substring(9, 12)) : -1;
      return new Ping(status, Duration.ofNanos(System.nanoTime() - t0).toMillis());
    }
  }

  long timedPing(GuardedBinding b) {
    try {
      Ping p = ping(b);
      if (p.status() != 200) {
        throw new AssertionError("a normal request got " + p.status());
      }
      return p.millis();
    } catch (IOException e) {
      throw new AssertionError("a normal request failed: " + e, e);
    }
  }

  CompletableFuture<Void> later(Duration d) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    timers.schedule(() -> f.complete(null), d.toMillis(), TimeUnit.MILLISECONDS);
    return f;
  }

  /** Polls a condition every 50 ms for at most 30 s (socket state has no event to wait on). */
  void awaitTrue(BooleanSupplier condition, String what) throws Exception {
    awaitTrue(condition, () -> what);
  }

  void awaitTrue(BooleanSupplier condition, Supplier<String> what) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting: " + what.get());
      }
      later(Duration.ofMillis(50)).get();
    }
  }
}
