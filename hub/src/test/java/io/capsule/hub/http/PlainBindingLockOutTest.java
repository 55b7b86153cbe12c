package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.javadsl.Flow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Why {@link GuardedBinding} exists: the same 2,000 slow connections that {@code
 * GuardedBindingTest} survives lock a plain Pekko HTTP binding (what the hub used) out for
 * everyone. Its {@code max-connections} (1,024) fills with heads that never finish and are never
 * timed out, and from then on no new connection is served. If this test ever fails, Pekko HTTP has
 * grown a defence of its own and the guard deserves a second look.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PlainBindingLockOutTest {

  @Test
  void twoThousandSlowConnectionsLockAPlainBindingOut() throws Exception {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "plain-binding-lock-out");
    try {
      Flow<HttpRequest, HttpResponse, ?> pong =
          Flow.of(HttpRequest.class).map(r -> HttpResponse.create().withEntity("pong"));
      ServerBinding binding =
          Http.get(system)
              .newServerAt("127.0.0.1", 0)
              .bindFlow(pong)
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
      InetSocketAddress address = binding.localAddress();
      assertTrue(answered(address), "the plain binding answers before the attack");
      boolean lockedOut = false;
      try (SlowClients attack = new SlowClients(address, 2_000, 20, Duration.ofMillis(1500))) {
        // Accepting 1,024 connections takes 10-20 s on this loaded machine; probe until one
        // probe goes unanswered, for at most 90 s.
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (!lockedOut && System.nanoTime() < deadline) {
          lockedOut = !answered(address);
        }
        System.out.println(
            (lockedOut ? "locked out" : "still answering")
                + " with "
                + attack.connects()
                + " slow connections opened");
      } finally {
        binding.terminate(Duration.ofSeconds(3)).toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      assertTrue(lockedOut, "2,000 slow connections did not lock the plain binding out in 90 s");
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** One request on a fresh connection from 127.0.0.1, answered within 3 s. */
  private static boolean answered(InetSocketAddress address) throws IOException {
    try (Socket s = new Socket()) {
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      s.connect(address, 3_000);
      s.setSoTimeout(3_000);
      s.getOutputStream()
          .write(
              "GET / HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
      String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return answer.startsWith("HTTP/1.1 200");
    } catch (SocketTimeoutException e) {
      return false;
    }
  }
}
