package io.capsule.driver.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The strict reading side of {@link EventJson}: the fields of one event object (or quota window),
 * each read once with its type checked; {@link #noOthers} refuses any field not read. A refusal is
 * an {@link IllegalArgumentException} naming {@code type.field}. Not thread-safe: one per object.
 */
final class EventFields {
  private static final BigInteger U64_LIMIT = BigInteger.ONE.shiftLeft(64);

  private final JsonNode node;
  final String type;
  private final Set<String> read = new HashSet<>(Set.of("type"));

  EventFields(JsonNode node, String type) {
    this.node = node;
    this.type = type;
  }

  private JsonNode required(String name) {
    read.add(name);
    JsonNode v = node.get(name);
    if (v == null) {
      throw new IllegalArgumentException(where(type, name) + " is missing");
    }
    return v;
  }

  String text(String name) {
    return text(required(name), type, name);
  }

  String textNode(JsonNode v, String name) {
    return text(v, type, name);
  }

  boolean bool(String name) {
    JsonNode v = required(name);
    if (!v.isBoolean()) {
      throw new IllegalArgumentException(where(type, name) + " must be true or false, not " + v);
    }
    return v.booleanValue();
  }

  long u64(String name) {
    return u64Node(required(name), name);
  }

  Long u64Node(JsonNode v, String name) {
    if (!v.isIntegralNumber()
        || v.bigIntegerValue().signum() < 0
        || v.bigIntegerValue().compareTo(U64_LIMIT) >= 0) {
      throw new IllegalArgumentException(
          where(type, name) + " must be an integer from 0 to 2^64-1, not " + v);
    }
    return v.bigIntegerValue().longValue();
  }

  long u32(String name) {
    JsonNode v = required(name);
    if (!v.isIntegralNumber()
        || !v.canConvertToLong()
        || v.longValue() < 0
        || v.longValue() > 0xffff_ffffL) {
      throw new IllegalArgumentException(
          where(type, name) + " must be an integer from 0 to 2^32-1, not " + v);
    }
    return v.longValue();
  }

  Double f64Node(JsonNode v, String name) {
    if (v.isNumber()) {
      return v.doubleValue();
    }
    if (v.isTextual()) {
      switch (v.textValue()) {
        case "NaN":
          return Double.NaN;
        case "Infinity":
          return Double.POSITIVE_INFINITY;
        case "-Infinity":
          return Double.NEGATIVE_INFINITY;
        default:
          break;
      }
    }
    throw new IllegalArgumentException(where(type, name) + " must be a number, not " + v);
  }

  <T> Optional<T> option(String name, BiFunction<JsonNode, String, T> some) {
    JsonNode v = required(name);
    return v.isNull() ? Optional.empty() : Optional.of(some.apply(v, name));
  }

  <E> E named(String name, E[] values, Function<E, String> witName) {
    String s = text(name);
    return Arrays.stream(values)
        .filter(v -> witName.apply(v).equals(s))
        .findFirst()
        .orElseThrow(
            () -> new IllegalArgumentException(where(type, name) + " has no case \"" + s + "\""));
  }

  List<QuotaWindow> windows() {
    JsonNode array = required("windows");
    if (!array.isArray()) {
      throw new IllegalArgumentException(where(type, "windows") + " must be an array");
    }
    List<QuotaWindow> windows = new ArrayList<>();
    for (JsonNode w : array) {
      if (!w.isObject()) {
        throw new IllegalArgumentException(where(type, "windows") + " holds a non-object " + w);
      }
      EventFields f = new EventFields(w, type + ".windows[" + windows.size() + "]");
      f.read.remove("type");
      windows.add(
          new QuotaWindow(
              f.text("name"),
              f.option("used", f::f64Node),
              f.option("resets-at", f::u64Node),
              f.option("window-minutes", f::u64Node),
              f.option(
                  "state",
                  (v, n) ->
                      Arrays.stream(QuotaState.values())
                          .filter(s -> s.witName().equals(v.asText()) && v.isTextual())
                          .findFirst()
                          .orElseThrow(
                              () ->
                                  new IllegalArgumentException(
                                      where(f.type, n) + " has no case " + v)))));
      f.noOthers();
    }
    return windows;
  }

  void noOthers() {
    Iterator<String> names = node.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!read.contains(name)) {
        throw new IllegalArgumentException(where(type, name) + " is not a field of this event");
      }
    }
  }

  static String text(JsonNode v, String type, String field) {
    if (v == null || !v.isTextual()) {
      throw new IllegalArgumentException(where(type, field) + " must be a string, not " + v);
    }
    return v.textValue();
  }

  static String where(String type, String field) {
    return type + "." + field;
  }
}
