package io.capsule.config.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.DidYouMean;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A mapping of the manifest being validated, with typed reads that report (never throw) what is
 * wrong as {@code E-MAN-002}. An explicit {@code null} value counts as absent. Every read returns
 * empty when the value is absent or unusable, so validation goes on and finds the next problem.
 */
final class Section {

  private final JsonNode node;
  private final String path;
  private final Problems problems;

  private Section(JsonNode node, String path, Problems problems) {
    this.node = node;
    this.path = path;
    this.problems = problems;
  }

  /**
   * The mapping at {@code path}; reports each key not in {@code allowed} as unknown. {@code node}
   * must be an object.
   */
  static Section of(JsonNode node, String path, Problems problems, Set<String> allowed) {
    Section section = new Section(node, path, problems);
    node.fieldNames()
        .forEachRemaining(
            key -> {
              if (!allowed.contains(key)) {
                problems.atKey(
                    Code.E_MAN_002,
                    LocatedTree.child(path, key),
                    "unknown key '"
                        + key
                        + "'"
                        + where(path)
                        + DidYouMean.closest(key, allowed)
                            .map(k -> "; did you mean '" + k + "'?")
                            .orElse("")
                        + "; expected one of "
                        + sorted(allowed));
              }
            });
    return section;
  }

  String path() {
    return path;
  }

  String pathOf(String key) {
    return LocatedTree.child(path, key);
  }

  /** The raw value of {@code key}, empty when absent or null; reports a missing required key. */
  Optional<JsonNode> raw(String key, boolean required) {
    JsonNode value = node.get(key);
    if (value == null || value.isNull()) {
      if (required) {
        problems.atKey(
            Code.E_MAN_002, pathOf(key), "missing required key '" + key + "'" + where(path));
      }
      return Optional.empty();
    }
    return Optional.of(value);
  }

  /** A string value. */
  Optional<String> text(String key, boolean required) {
    return raw(key, required)
        .flatMap(v -> expect(v, pathOf(key), JsonNode::isTextual, "a string"))
        .map(JsonNode::textValue);
  }

  /** A true/false value. */
  Optional<Boolean> bool(String key) {
    return raw(key, false)
        .flatMap(v -> expect(v, pathOf(key), JsonNode::isBoolean, "true or false"))
        .map(JsonNode::booleanValue);
  }

  /** A whole number within {@code 0..max}. */
  Optional<BigInteger> unsigned(String key, BigInteger max, String typeName) {
    Optional<BigInteger> value =
        raw(key, false)
            .flatMap(v -> expect(v, pathOf(key), JsonNode::isIntegralNumber, "a whole number"))
            .map(JsonNode::bigIntegerValue);
    if (value.isPresent() && (value.get().signum() < 0 || value.get().compareTo(max) > 0)) {
      problems.atValue(
          Code.E_MAN_002,
          pathOf(key),
          key + " must be a " + typeName + " (0 to " + max + "), got " + value.get());
      return Optional.empty();
    }
    return value;
  }

  /** One of an enum's YAML spellings. */
  <E extends Enum<E>> Optional<E> choice(
      String key, boolean required, E[] values, Function<E, String> yaml) {
    Optional<String> text = text(key, required);
    if (text.isEmpty()) {
      return Optional.empty();
    }
    for (E value : values) {
      if (yaml.apply(value).equals(text.get())) {
        return Optional.of(value);
      }
    }
    problems.atValue(
        Code.E_MAN_002,
        pathOf(key),
        key
            + " must be one of "
            + Arrays.stream(values).map(yaml).toList()
            + ", got '"
            + text.get()
            + "'");
    return Optional.empty();
  }

  /** A nested mapping with its allowed keys. */
  Optional<Section> section(String key, boolean required, Set<String> allowed) {
    return raw(key, required)
        .flatMap(v -> expect(v, pathOf(key), JsonNode::isObject, "a mapping (key: value)"))
        .map(v -> Section.of(v, pathOf(key), problems, allowed));
  }

  /** The elements of a list value with their paths; empty list when absent. */
  List<Element> list(String key) {
    Optional<JsonNode> value =
        raw(key, false).flatMap(v -> expect(v, pathOf(key), JsonNode::isArray, "a list"));
    List<Element> elements = new ArrayList<>();
    value.ifPresent(
        array -> {
          for (int i = 0; i < array.size(); i++) {
            elements.add(new Element(array.get(i), LocatedTree.element(pathOf(key), i)));
          }
        });
    return elements;
  }

  /** A list whose elements must be strings; wrong elements are reported and skipped. */
  List<Element> strings(String key) {
    List<Element> strings = new ArrayList<>();
    for (Element e : list(key)) {
      if (expect(e.node(), e.path(), JsonNode::isTextual, "a string").isPresent()) {
        strings.add(e);
      }
    }
    return strings;
  }

  /** One element of a list. */
  record Element(JsonNode node, String path) {
    String text() {
      return node.textValue();
    }
  }

  private Optional<JsonNode> expect(
      JsonNode value, String at, Predicate<JsonNode> ok, String expected) {
    if (ok.test(value)) {
      return Optional.of(value);
    }
    problems.atValue(Code.E_MAN_002, at, at + " must be " + expected + ", got " + describe(value));
    return Optional.empty();
  }

  /** How a value's type reads in a message. */
  static String describe(JsonNode value) {
    if (value == null || value.isNull()) {
      return "nothing (null)";
    }
    if (value.isObject()) {
      return "a mapping";
    }
    if (value.isArray()) {
      return "a list";
    }
    if (value.isBoolean()) {
      return "'" + value.asText() + "' (a boolean)";
    }
    if (value.isNumber()) {
      return value.asText() + " (a number; quote it if it is text)";
    }
    return "'" + value.asText() + "' (a string)";
  }

  private static String where(String path) {
    return path.isEmpty() ? " at the top level" : " in " + path;
  }

  private static List<String> sorted(Set<String> keys) {
    return keys.stream().sorted().toList();
  }
}
