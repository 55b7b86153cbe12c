package io.capsule.config.manifest;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Reads YAML text into a {@link LocatedTree}: the Jackson tree plus the line and column of every
 * key and value. It walks the YAML parser's tokens itself because a databind-built {@link JsonNode}
 * forgets where it came from.
 *
 * <p>Contract: exactly one YAML document whose root is anything (the validator decides whether it
 * must be a mapping). Text that is not YAML, empty text, or a second document is a {@link NotYaml}
 * carrying the location Jackson reports, when it reports one.
 */
public final class YamlTreeReader {

  // YAML says `key:` with nothing after it is null; Jackson reads it as "" unless told.
  private static final YAMLFactory YAML =
      YAMLFactory.builder().enable(YAMLParser.Feature.EMPTY_STRING_AS_NULL).build();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** The text is not one YAML document; {@code location} is where the parser gave up. */
  public static final class NotYaml extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient SourceLocation location;

    NotYaml(String message, SourceLocation location, Throwable cause) {
      super(message, cause);
      this.location = location;
    }

    public Optional<SourceLocation> location() {
      return Optional.ofNullable(location);
    }
  }

  private final JsonParser parser;
  private final Map<String, SourceLocation> keys = new HashMap<>();
  private final Map<String, SourceLocation> values = new HashMap<>();
  private final List<LocatedTree.Refusal> refusals = new ArrayList<>();

  private YamlTreeReader(JsonParser parser) {
    this.parser = parser;
  }

  /** Parses {@code text} (one YAML document) with locations. */
  public static LocatedTree read(String text) throws NotYaml {
    try (JsonParser parser = YAML.createParser(text)) {
      YamlTreeReader reader = new YamlTreeReader(parser);
      if (parser.nextToken() == null) {
        throw new NotYaml("the file is empty (no YAML document)", new SourceLocation(1, 1), null);
      }
      JsonNode root = reader.value("");
      if (parser.nextToken() != null) {
        throw new NotYaml(
            "a second YAML document starts here (a manifest is one document)",
            locationOf(parser.currentTokenLocation()),
            null);
      }
      return new LocatedTree(root, reader.keys, reader.values, reader.refusals);
    } catch (JsonProcessingException e) {
      if (e.getCause() instanceof MarkedYAMLException m && m.getProblem() != null) {
        // SnakeYAML says what is wrong ("problem") and, separately, what it was reading.
        String what = m.getProblem() + (m.getContext() == null ? "" : " (" + m.getContext() + ")");
        Mark mark = m.getProblemMark();
        SourceLocation at =
            mark == null ? null : new SourceLocation(mark.getLine() + 1, mark.getColumn() + 1);
        throw new NotYaml(firstLine(what), at, e);
      }
      throw new NotYaml(firstLine(e.getOriginalMessage()), locationOf(e.getLocation()), e);
    } catch (IOException e) {
      throw new NotYaml(firstLine(e.getMessage()), null, e);
    }
  }

  private JsonNode value(String path) throws IOException {
    SourceLocation at = locationOf(parser.currentTokenLocation());
    if (at != null) {
      values.put(path, at);
    }
    JsonToken token = parser.currentToken();
    if (parser instanceof YAMLParser yaml && yaml.isCurrentAlias()) {
      // Jackson hands an alias over as its anchor's name, which would silently become the value.
      refusals.add(
          new LocatedTree.Refusal(
              path,
              at,
              "YAML aliases (*"
                  + parser.getText()
                  + ") are not supported in a manifest; write the"
                  + " value out"));
      return NODES.nullNode();
    }
    switch (token) {
      case START_OBJECT:
        return mapping(path);
      case START_ARRAY:
        return sequence(path);
      case VALUE_STRING:
        return NODES.textNode(parser.getText());
      case VALUE_NUMBER_INT:
        return integer();
      case VALUE_NUMBER_FLOAT:
        // The same node types a plain ObjectMapper tree would hold, so config trees compare equal.
        return parser.getNumberType() == JsonParser.NumberType.BIG_DECIMAL
            ? NODES.numberNode(parser.getDecimalValue())
            : NODES.numberNode(parser.getDoubleValue());
      case VALUE_TRUE:
        return NODES.booleanNode(true);
      case VALUE_FALSE:
        return NODES.booleanNode(false);
      case VALUE_NULL:
        return NODES.nullNode();
      default:
        // Embedded objects (e.g. !!binary) have no place in a manifest; keep their text.
        return NODES.textNode(parser.getText());
    }
  }

  private JsonNode integer() throws IOException {
    switch (parser.getNumberType()) {
      case INT:
        return NODES.numberNode(parser.getIntValue());
      case LONG:
        return NODES.numberNode(parser.getLongValue());
      default:
        return NODES.numberNode(parser.getBigIntegerValue());
    }
  }

  private ObjectNode mapping(String path) throws IOException {
    ObjectNode node = NODES.objectNode();
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String key = parser.currentName();
      String childPath = LocatedTree.child(path, key);
      SourceLocation keyAt = locationOf(parser.currentTokenLocation());
      if (node.has(key)) {
        refusals.add(
            new LocatedTree.Refusal(
                childPath, keyAt, "duplicate key '" + childPath + "' (each key may appear once)"));
      } else if (keyAt != null) {
        keys.put(childPath, keyAt);
      }
      parser.nextToken();
      node.set(key, value(childPath));
    }
    return node;
  }

  private ArrayNode sequence(String path) throws IOException {
    ArrayNode node = NODES.arrayNode();
    int index = 0;
    while (parser.nextToken() != JsonToken.END_ARRAY) {
      node.add(value(LocatedTree.element(path, index++)));
    }
    return node;
  }

  private static SourceLocation locationOf(JsonLocation location) {
    if (location == null || location.getLineNr() < 1 || location.getColumnNr() < 1) {
      return null;
    }
    return new SourceLocation(location.getLineNr(), location.getColumnNr());
  }

  private static String firstLine(String message) {
    if (message == null || message.isBlank()) {
      return "not valid YAML";
    }
    String line = message.strip().lines().findFirst().orElse("not valid YAML");
    return line.length() > 200 ? line.substring(0, 200) + "…" : line;
  }
}
