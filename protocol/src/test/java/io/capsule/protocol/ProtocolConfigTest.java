package io.capsule.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ProtocolConfigTest {

  @Test
  void theDefaultsAreTheSpecsNumbers() {
    ProtocolConfig c = ProtocolConfig.defaults();
    assertEquals(1 << 20, c.frameCapBytes());
    assertEquals(Duration.ofSeconds(15), c.heartbeatIdle());
    assertEquals(Duration.ofSeconds(45), c.deadAfter());
    assertEquals(Duration.ofSeconds(10), c.helloTimeout());
  }

  @Test
  void aBuilderRoundTripKeepsEveryValue() {
    ProtocolConfig c = ProtocolConfig.builder().ackEvery(7).holdBound(9).backoffJitter(0.5).build();
    assertEquals(c, c.toBuilder().build());
  }

  @Test
  void refusesADeadlineNotLongerThanTheHeartbeat() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            ProtocolConfig.builder()
                .heartbeatIdle(Duration.ofSeconds(5))
                .deadAfter(Duration.ofSeconds(5))
                .build());
  }

  @Test
  void refusesNonPositiveBoundsAndABackwardBackoff() {
    assertThrows(
        IllegalArgumentException.class,
        () -> ProtocolConfig.builder().replayBufferBound(0).build());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            ProtocolConfig.builder()
                .backoffMin(Duration.ofSeconds(2))
                .backoffMax(Duration.ofSeconds(1))
                .build());
    assertThrows(
        IllegalArgumentException.class, () -> ProtocolConfig.builder().backoffJitter(1.5).build());
  }
}
