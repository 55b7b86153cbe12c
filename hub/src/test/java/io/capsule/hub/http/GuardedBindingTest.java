package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * {@link GuardedBinding} on real loopback sockets, one rule at a time: normal requests (kept alive,
 * pipelined) and a WebSocket pass; a head that never completes, first or later on a kept-alive
 * connection, is closed at its deadline (408 for the first); a connection quiet between requests is
 * closed only by the idle timeout. Admission is {@code GuardedBindingAdmissionTest}, the attack
 * {@code GuardedBindingAttackTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GuardedBindingTest {
  private GuardedBindingFixture fx;

  @BeforeAll
  void start() {
    fx = new GuardedBindingFixture("guarded-binding-test");
  }

  @AfterEach
  void unbind() throws Exception {
    fx.unbind();
  }

  @AfterAll
  void stop() throws Exception {
    fx.stop();
  }

  @Test
  void aRequestIsAnsweredAndTheConnectionKeptAlive() throws Exception {
    GuardedBinding b =
        fx.bind(GuardedBindingFixture.limits(Duration.ofSeconds(5), Duration.ofSeconds(30), 10, 5));
    try (Socket s = HttpWire.connect(b, "127.0.0.1")) {
      for (int i = 0; i < 3; i++) {
        HttpWire.write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
        String answer = HttpWire.readResponse(s);
        assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
        assertTrue(answer.endsWith("pong"), answer);
      }
    }
  }

  @Test
  void pipelinedRequestsAreAllAnsweredInOrder() throws Exception {
    GuardedBinding b =
        fx.bind(GuardedBindingFixture.limits(Duration.ofSeconds(5), Duration.ofSeconds(30), 10, 5));
    try (Socket s = HttpWire.connect(b, "127.0.0.1")) {
      HttpWire.write(
          s,
          "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n"
              + "GET /nowhere HTTP/1.1\r\nHost: hub\r\n\r\n"
              + "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
      assertTrue(HttpWire.readResponse(s).startsWith("HTTP/1.1 200"));
      assertTrue(HttpWire.readResponse(s).startsWith("HTTP/1.1 404"));
      assertTrue(HttpWire.readResponse(s).startsWith("HTTP/1.1 200"));
    }
    assertEquals(0, b.stats().headerTimeouts());
  }

  @Test
  void aHeadThatNeverCompletesIsClosedWithA408() throws Exception {
    GuardedBinding b =
        fx.bind(
            GuardedBindingFixture.limits(Duration.ofMillis(1500), Duration.ofSeconds(60), 10, 5));
    try (Socket s = HttpWire.connect(b, "127.0.0.1")) {
      HttpWire.write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\nX-Slow: a");
      long t0 = System.nanoTime();
      String answer = HttpWire.readToEnd(s, Duration.ofSeconds(20));
      long tookMillis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
      assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
      assertTrue(answer.contains("E-HTTP-003"), answer);
      assertTrue(tookMillis >= 1000, "closed before the deadline: " + tookMillis + " ms");
    }
    assertEquals(1, b.stats().headerTimeouts());
    fx.awaitTrue(() -> b.stats().open() == 0, "the timed-out connection is released");
  }

  @Test
  void aLaterHeadOnAKeptAliveConnectionHasADeadlineToo() throws Exception {
    GuardedBinding b =
        fx.bind(
            GuardedBindingFixture.limits(Duration.ofMillis(1500), Duration.ofSeconds(60), 10, 5));
    try (Socket s = HttpWire.connect(b, "127.0.0.1")) {
      HttpWire.write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
      assertTrue(HttpWire.readResponse(s).startsWith("HTTP/1.1 200"));
      HttpWire.write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\nX-Slow: a");
      assertEquals(
          "", HttpWire.readToEnd(s, Duration.ofSeconds(20)), "closed without a second response");
    }
    assertEquals(1, b.stats().headerTimeouts());
  }

  @Test
  void aConnectionSilentBetweenRequestsIsClosedOnlyByTheIdleTimeout() throws Exception {
    GuardedBinding b =
        fx.bind(
            GuardedBindingFixture.limits(Duration.ofMillis(500), Duration.ofMillis(2500), 10, 5));
    try (Socket s = HttpWire.connect(b, "127.0.0.1")) {
      HttpWire.write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
      assertTrue(HttpWire.readResponse(s).startsWith("HTTP/1.1 200"));
      long t0 = System.nanoTime();
      assertEquals("", HttpWire.readToEnd(s, Duration.ofSeconds(20)));
      long quietMillis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
      assertTrue(quietMillis >= 2000, "closed before the idle timeout: " + quietMillis + " ms");
    }
    assertEquals(0, b.stats().headerTimeouts());
    assertEquals(1, b.stats().idleTimeouts());
  }

  @Test
  void aWebSocketIsUpgradedAndOutlivesTheHeaderDeadline() throws Exception {
    GuardedBinding b =
        fx.bind(
            GuardedBindingFixture.limits(Duration.ofMillis(800), Duration.ofSeconds(60), 10, 5));
    WebSocketEcho echo = WebSocketEcho.open(b);
    try {
      assertEquals("one", echo.roundTrip("one"));
      fx.later(Duration.ofMillis(2000)).get(10, TimeUnit.SECONDS); // past two head deadlines
      assertEquals("two", echo.roundTrip("two"));
      assertEquals(0, b.stats().headerTimeouts());
    } finally {
      echo.close();
    }
  }
}
