package io.capsule.protocol.frame;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The top-level fields of a frame that this version does not know, in the order they arrived. The
 * codec re-emits them after the known fields, so a frame from a newer peer passes through this
 * runtime unchanged (forward compatibility). The values are read-only by contract.
 */
public final class Extras {
  /** No unknown fields. */
  public static final Extras NONE = new Extras(Map.of());

  private final Map<String, JsonNode> fields;

  private Extras(Map<String, JsonNode> fields) {
    this.fields = fields;
  }

  /** Keeps the given order; an empty map gives {@link #NONE}. */
  public static Extras of(Map<String, JsonNode> fields) {
    if (fields == null || fields.isEmpty()) {
      return NONE;
    }
    return new Extras(Collections.unmodifiableMap(new LinkedHashMap<>(fields)));
  }

  public Map<String, JsonNode> fields() {
    return fields;
  }

  public boolean isEmpty() {
    return fields.isEmpty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Extras other && fields.equals(other.fields);
  }

  @Override
  public int hashCode() {
    return fields.hashCode();
  }

  @Override
  public String toString() {
    return fields.toString();
  }
}
