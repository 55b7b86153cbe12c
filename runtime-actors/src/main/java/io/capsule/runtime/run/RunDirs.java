package io.capsule.runtime.run;

import io.capsule.runtime.driver.ResolvedCapsule;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** The run directory (trace, files directory) and the granted environment of a run. */
final class RunDirs {

  private RunDirs() {}

  /**
   * A directory name unique per run: the task id made file-safe and cut to 64 characters, the start
   * time and a random suffix (one task id may run more than once).
   */
  static String name(String taskId, Instant at) {
    String safe = taskId.replaceAll("[^A-Za-z0-9._-]", "_");
    if (safe.length() > 64) {
      safe = safe.substring(0, 64);
    }
    return safe
        + "-"
        + at.toEpochMilli()
        + "-"
        + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);
  }

  /** The host's values of the capsule's granted names (for the version probe); nothing else. */
  static Map<String, String> grantedEnv(ResolvedCapsule capsule, Map<String, String> hostEnv) {
    return capsule.manifest().capabilities().env().grantedValues(hostEnv);
  }
}
