package io.capsule.runtime.harness.contain;

import io.capsule.config.settings.ResourceSettings;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How this machine bounds a run's resources, detected once per settings and remembered for the
 * JVM's life (the cgroup layout does not change under a running runner; {@code capsule doctor}
 * detects afresh).
 */
final class Mechanisms {

  private static final Map<ResourceSettings, CgroupMode> DETECTED = new ConcurrentHashMap<>();

  private Mechanisms() {}

  static CgroupMode of(ResourceSettings settings) {
    return DETECTED.computeIfAbsent(settings, CgroupMode::detect);
  }
}
