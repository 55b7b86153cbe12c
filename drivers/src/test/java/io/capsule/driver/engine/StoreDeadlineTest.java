package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link StoreDeadline}: the store's deadline set only when the epoch may have moved. */
class StoreDeadlineTest {

  private final long[] epoch = {0};
  private final List<Long> set = new ArrayList<>();
  private final StoreDeadline deadline = new StoreDeadline(31, () -> epoch[0], set::add);

  @Test
  void theFirstCallSetsTheDeadlineOneTickLongerThanAsked() {
    deadline.arm();
    assertEquals(List.of(32L), set);
  }

  @Test
  void callsWhileTheEpochStandsStillKeepTheDeadlineAlreadySet() {
    deadline.arm();
    deadline.arm();
    deadline.arm();
    assertEquals(List.of(32L), set);
  }

  @Test
  void theFirstCallAfterATickSetsItAgain() {
    deadline.arm();
    epoch[0] = 1;
    deadline.arm();
    deadline.arm();
    epoch[0] = 7;
    deadline.arm();
    assertEquals(List.of(32L, 32L, 32L), set);
  }
}
