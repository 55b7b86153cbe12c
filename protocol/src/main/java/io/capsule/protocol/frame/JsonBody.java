package io.capsule.protocol.frame;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.schema.Schemas;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A body held as its JSON object, so every key (known or not, at any depth) survives a round trip
 * in its original order. Subclasses add typed accessors for the keys the spec names. The held node
 * is private and never handed out: {@link #json()} returns a copy.
 */
public abstract sealed class JsonBody permits TaskSpec, TaskReportBody, Invocation {
  private final ObjectNode json;

  JsonBody(ObjectNode json) {
    this.json = json;
  }

  /** A copy of the whole body, unknown keys included. */
  public final ObjectNode json() {
    return json.deepCopy();
  }

  /** Writes the body as one JSON object (the codec's fast path; no copy). */
  public final void writeTo(JsonGenerator out) throws IOException {
    out.writeTree(json);
  }

  /** Validation errors of this body against its schema ({@code "<json path>: <message>"}). */
  public final List<String> validate() {
    return Schemas.validate(schema(), json);
  }

  abstract Schemas.Id schema();

  final String text(String key) {
    JsonNode v = json.get(key);
    return v == null || !v.isTextual() ? null : v.textValue();
  }

  final Optional<String> optionalText(String key) {
    return Optional.ofNullable(text(key));
  }

  final OptionalLong optionalLong(String key) {
    JsonNode v = json.get(key);
    return v != null && v.canConvertToExactIntegral()
        ? OptionalLong.of(v.longValue())
        : OptionalLong.empty();
  }

  final JsonNode node(String key) {
    JsonNode v = json.get(key);
    return v == null ? null : v.deepCopy();
  }

  final List<String> texts(String key) {
    JsonNode v = json.get(key);
    List<String> out = new ArrayList<>();
    if (v != null && v.isArray()) {
      v.forEach(e -> out.add(e.asText()));
    }
    return List.copyOf(out);
  }

  @Override
  public final boolean equals(Object o) {
    return o != null
        && o.getClass() == getClass()
        && json.equals(JsonBody::compareNodes, ((JsonBody) o).json);
  }

  /** Numbers compare by value (an int 3 equals a long 3), everything else by equals. */
  private static int compareNodes(JsonNode a, JsonNode b) {
    if (a.isNumber() && b.isNumber()) {
      return a.decimalValue().compareTo(b.decimalValue());
    }
    return a.equals(b) ? 0 : 1;
  }

  /**
   * By class only: equality compares numbers by value (int 3 equals long 3), which a node's own
   * hash does not honour; bodies are compared far more often than hashed.
   */
  @Override
  public final int hashCode() {
    return getClass().hashCode();
  }

  @Override
  public final String toString() {
    return getClass().getSimpleName() + json;
  }
}
