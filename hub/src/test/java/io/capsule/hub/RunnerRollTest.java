package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.hub.runner.RunnerInfo;
import io.capsule.hub.runner.RunnerKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which runners {@code GET /v1/runners} lists with an age-out of 10 minutes: a row is what happened
 * to runner r ({@code up}, {@code down}, {@code +N}: N minutes pass) and whether it is connected
 * now, as the hub reports it.
 */
class RunnerRollTest {
  private static final RunnerKey R = new RunnerKey("p", "r");

  /** A clock the test moves. */
  private static final class Manual extends Clock {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  @ParameterizedTest(name = "{0}, connected {1} -> listed {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # what happened            | connected now | listed
          up                         | true          | true
          up +60                     | true          | true
          up down                    | false         | true
          up down +9                 | false         | true
          up down +10                | false         | false
          up down +10 up             | true          | true
          up down +20 up down +5     | false         | true
          +5                         | false         | true
          +10                        | false         | false
          up +30                     | false         | true
          """)
  void listsConnectedRunnersAndDisconnectedOnesUntilTheyAgeOut(
      String happened, boolean connected, boolean listed) {
    Manual clock = new Manual();
    RunnerRoll roll = new RunnerRoll(clock, Duration.ofMinutes(10));
    for (String step : happened.trim().split(" +")) {
      switch (step) {
        case "up" -> roll.up(R);
        case "down" -> roll.down(R);
        default ->
            clock.now = clock.now.plus(Duration.ofMinutes(Long.parseLong(step.substring(1))));
      }
    }
    RunnerInfo r = new RunnerInfo(R, connected, "t", List.of(), Set.of());
    assertEquals(listed ? List.of(r) : List.of(), roll.listed(List.of(r)));
  }

  @ParameterizedTest
  @CsvSource({"-1"})
  void refusesANegativeAgeOut(long seconds) {
    assertThrows(
        IllegalArgumentException.class,
        () -> new RunnerRoll(Clock.systemUTC(), Duration.ofSeconds(seconds)));
  }
}
