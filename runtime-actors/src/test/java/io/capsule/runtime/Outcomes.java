package io.capsule.runtime;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/** Run outcomes for tests that need one but look at none of its fields. */
public final class Outcomes {
  private Outcomes() {}

  /** Task {@code t} done in one turn with result {@code r}, no usage, in one second. */
  public static RunOutcome done() {
    return done(Set.of());
  }

  /** As {@link #done()}, with these usage members left unreported. */
  public static RunOutcome done(Set<String> unreported) {
    return new RunOutcome(
        "t",
        RunStatus.DONE,
        Optional.of("r"),
        1,
        UsageSplit.ZERO,
        Optional.empty(),
        Optional.empty(),
        "done",
        Optional.empty(),
        Duration.ofSeconds(1),
        unreported);
  }
}
