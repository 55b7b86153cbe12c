package io.capsule.runtime.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One trace line before it gets its timestamp: an {@code event_type} and ordered fields. Values are
 * strings, numbers, booleans, {@code null} (a member not reported: never written as 0), lists or
 * maps of those. Build with {@link #of(String)} and {@link #with(String, Object)}.
 */
public record TraceRecord(String eventType, Map<String, Object> fields) {

  public TraceRecord {
    Objects.requireNonNull(eventType, "eventType");
    fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }

  public static TraceRecord of(String eventType) {
    return new TraceRecord(eventType, Map.of());
  }

  /** A copy with one more field, kept last. */
  public TraceRecord with(String key, Object value) {
    Map<String, Object> more = new LinkedHashMap<>(fields);
    more.put(key, value);
    return new TraceRecord(eventType, more);
  }
}
