package io.capsule.config.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A YAML document as a Jackson tree plus where each key and value came from. Jackson's {@link
 * JsonNode} keeps no locations, so {@link YamlTreeReader} records them by key path while it walks
 * the parser's tokens. Key paths look like {@code capabilities.env.allow[2]}; the root is {@code
 * ""}.
 *
 * <p>A tree built in memory (no text) has empty location maps; every lookup then answers empty and
 * diagnostics simply carry no line or column.
 *
 * @param root the document's root value
 * @param keyLocations where the key of each mapping entry starts, by the entry's path
 * @param valueLocations where each value (scalar, mapping or sequence) starts, by its path
 * @param refusals YAML the text used that a manifest does not allow (a key repeated in one mapping,
 *     an alias); the validator reports each as E-MAN-002
 */
public record LocatedTree(
    JsonNode root,
    Map<String, SourceLocation> keyLocations,
    Map<String, SourceLocation> valueLocations,
    List<Refusal> refusals) {

  /** Something the YAML text did that a manifest refuses, where it did it (may be null). */
  public record Refusal(String path, SourceLocation location, String message) {}

  public LocatedTree {
    keyLocations = Map.copyOf(keyLocations);
    valueLocations = Map.copyOf(valueLocations);
    refusals = List.copyOf(refusals);
  }

  /** A tree with no source text behind it (built in memory). */
  public static LocatedTree inMemory(JsonNode root) {
    return new LocatedTree(root, Map.of(), Map.of(), List.of());
  }

  /** Where the key of the entry at {@code path} starts, else where its value starts. */
  public Optional<SourceLocation> keyLocation(String path) {
    SourceLocation key = keyLocations.get(path);
    return key != null ? Optional.of(key) : valueLocation(path);
  }

  /**
   * Where the value at {@code path} starts; if there is none (a missing key), where the nearest
   * enclosing value starts, so a "missing key" diagnostic points at the mapping that lacks it.
   */
  public Optional<SourceLocation> valueLocation(String path) {
    String p = path;
    while (true) {
      SourceLocation at = valueLocations.get(p);
      if (at != null) {
        return Optional.of(at);
      }
      if (p.isEmpty()) {
        return Optional.empty();
      }
      p = parent(p);
    }
  }

  /** The path of the value that holds {@code path} ({@code a.b[2]} → {@code a.b} → {@code a}). */
  static String parent(String path) {
    int cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
    return cut <= 0 ? "" : path.substring(0, cut);
  }

  /** The path of a mapping entry. */
  static String child(String path, String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  /** The path of a sequence element. */
  static String element(String path, int index) {
    return path + "[" + index + "]";
  }
}
