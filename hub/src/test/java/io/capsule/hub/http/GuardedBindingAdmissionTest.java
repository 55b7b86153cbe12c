package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * {@link GuardedBinding}'s door on real loopback sockets: an address over its share and a server at
 * its cap answer 503 at once with their codes, while others are still served.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GuardedBindingAdmissionTest {
  private GuardedBindingFixture fx;

  @BeforeAll
  void start() {
    fx = new GuardedBindingFixture("guarded-binding-admission-test");
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
  void anAddressOverItsShareIsAnswered503AtOnceWhileOthersAreServed() throws Exception {
    GuardedBinding b =
        fx.bind(
            GuardedBindingFixture.limits(Duration.ofSeconds(30), Duration.ofSeconds(60), 10, 2));
    List<Socket> held = new ArrayList<>();
    try {
      held.add(HttpWire.connect(b, "127.0.0.5"));
      held.add(HttpWire.connect(b, "127.0.0.5"));
      fx.awaitTrue(() -> b.stats().open() == 2, "two connections admitted");
      try (Socket third = HttpWire.connect(b, "127.0.0.5")) {
        String refused = HttpWire.readToEnd(third, Duration.ofSeconds(10));
        assertTrue(refused.startsWith("HTTP/1.1 503"), refused);
        assertTrue(refused.contains("E-HTTP-001"), refused);
        assertTrue(refused.contains("127.0.0.5"), refused);
      }
      assertEquals(200, fx.ping(b).status());
      assertEquals(1, b.stats().refusedPerAddress());
    } finally {
      HttpWire.closeAll(held);
    }
  }

  @Test
  void aServerAtItsCapAnswers503AtOnce() throws Exception {
    GuardedBinding b =
        fx.bind(GuardedBindingFixture.limits(Duration.ofSeconds(30), Duration.ofSeconds(60), 3, 2));
    List<Socket> held = new ArrayList<>();
    try {
      for (String from : List.of("127.0.0.6", "127.0.0.7", "127.0.0.8")) {
        held.add(HttpWire.connect(b, from));
      }
      fx.awaitTrue(() -> b.stats().open() == 3, "three connections admitted");
      try (Socket fourth = HttpWire.connect(b, "127.0.0.9")) {
        String refused = HttpWire.readToEnd(fourth, Duration.ofSeconds(10));
        assertTrue(refused.startsWith("HTTP/1.1 503"), refused);
        assertTrue(refused.contains("E-HTTP-002"), refused);
      }
      assertEquals(1, b.stats().refusedTotal());
    } finally {
      HttpWire.closeAll(held);
    }
    fx.awaitTrue(() -> b.stats().open() == 0, "every connection released");
  }
}
