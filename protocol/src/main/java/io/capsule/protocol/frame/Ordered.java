package io.capsule.protocol.frame;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** Immutable copies of maps that keep their order, so a frame re-encodes in the order it came. */
final class Ordered {
  private Ordered() {}

  static <V> Map<String, V> copy(Map<String, V> map) {
    if (map == null || map.isEmpty()) {
      return Map.of();
    }
    return Collections.unmodifiableMap(new LinkedHashMap<>(map));
  }
}
