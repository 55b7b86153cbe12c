package io.capsule.hub.placement;

import io.capsule.protocol.frame.Capabilities;
import java.util.Collection;
import java.util.Objects;
import java.util.Set;

/**
 * What the hub knows of one runner of a project when it places tasks.
 *
 * @param runnerId the runner's id (from its token)
 * @param capsules the capsule names it announced ({@code capsule:<name>}); empty means it announced
 *     none and is treated as able to run any capsule, so runners older than the convention keep
 *     working
 * @param slots how many runs it may run at once ({@code slots:<n>}; 1 when it announced none)
 * @param running how many tasks are placed on it and not yet reported
 * @param connected false while it is disconnected or declared dead; nothing is placed on it then
 */
public record RunnerView(
    String runnerId, Set<String> capsules, int slots, int running, boolean connected) {

  public RunnerView {
    Objects.requireNonNull(runnerId, "runnerId");
    capsules = Set.copyOf(Objects.requireNonNull(capsules, "capsules"));
    if (slots < 0 || running < 0) {
      throw new IllegalArgumentException(
          "runner " + runnerId + ": slots and running must be >= 0, got " + slots + "/" + running);
    }
  }

  /**
   * The view of a runner from what its hello announced ({@code capsule:<name>}, {@code slots:<n>};
   * see {@link Capabilities#announced}): no capsules announced means any capsule, no slots means 1.
   */
  public static RunnerView announced(
      String runnerId, Collection<String> capabilities, int running, boolean connected) {
    Capabilities.Announced a = Capabilities.announced(capabilities);
    return new RunnerView(runnerId, a.capsules(), a.slots(), running, connected);
  }

  /** Whether this runner can run {@code capsule} at all (ignoring its load and connection). */
  public boolean runs(String capsule) {
    return capsules.isEmpty() || capsules.contains(capsule);
  }
}
