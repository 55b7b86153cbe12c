package io.capsule.protocol.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.PathType;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The protocol's JSON Schemas (draft 2020-12), kept in {@code src/main/resources/schemas/} and
 * loaded once. Errors read {@code "<json path>: <message>"} and come sorted, so the same bad
 * document always gives the same text.
 */
public final class Schemas {

  /** Every schema file, by its role. */
  public enum Id {
    TASK_SPEC("task-spec.json"),
    TASK_REPORT("task-report.json"),
    USAGE_SPLIT("usage-split.json"),
    INVOCATION("invocation.json"),
    HELLO("hello.json"),
    TASK_ASSIGN("task-assign.json"),
    TASK_PROGRESS("task-progress.json"),
    TASK_REPORT_FRAME("task-report-frame.json"),
    TASK_CANCEL("task-cancel.json"),
    PING("ping.json"),
    PONG("pong.json"),
    ACK("ack.json"),
    ERROR("error.json");

    private final String file;

    Id(String file) {
      this.file = file;
    }

    public String file() {
      return file;
    }

    /** The schema of a frame {@code type}, or null for an unknown type. */
    public static Id forFrameType(String type) {
      return switch (type) {
        case "hello" -> HELLO;
        case "task.assign" -> TASK_ASSIGN;
        case "task.progress" -> TASK_PROGRESS;
        case "task.report" -> TASK_REPORT_FRAME;
        case "task.cancel" -> TASK_CANCEL;
        case "ping" -> PING;
        case "pong" -> PONG;
        case "ack" -> ACK;
        case "error" -> ERROR;
        default -> null;
      };
    }
  }

  /** The {@code $id} prefix of every schema; resolved to the classpath, never fetched. */
  public static final String BASE = "https://capsule.io/schemas/";

  private static final Map<Id, JsonSchema> LOADED = load();

  private Schemas() {}

  private static Map<Id, JsonSchema> load() {
    JsonSchemaFactory factory =
        JsonSchemaFactory.getInstance(
            SpecVersion.VersionFlag.V202012,
            b -> b.schemaMappers(m -> m.mapPrefix(BASE, "classpath:schemas/")));
    SchemaValidatorsConfig config =
        SchemaValidatorsConfig.builder()
            .locale(Locale.ROOT)
            .pathType(PathType.JSON_PATH)
            .formatAssertionsEnabled(true)
            .build();
    Map<Id, JsonSchema> out = new EnumMap<>(Id.class);
    for (Id id : Id.values()) {
      JsonSchema schema = factory.getSchema(SchemaLocation.of(BASE + id.file()), config);
      schema.initializeValidators();
      out.put(id, schema);
    }
    return out;
  }

  /**
   * Loads every schema now (a second or so on a cold JVM) instead of on the first frame, where the
   * delay would eat into timeouts such as the hello timeout.
   */
  public static void preload() {
    // Class initialisation has loaded them.
  }

  /** The errors of {@code json} against the schema, sorted; empty when valid. Thread-safe. */
  public static List<String> validate(Id id, JsonNode json) {
    var messages = LOADED.get(id).validate(json);
    if (messages.isEmpty()) {
      return List.of();
    }
    List<String> out = new ArrayList<>(messages.size());
    for (ValidationMessage m : messages) {
      out.add(render(m));
    }
    out.sort(null);
    return List.copyOf(out);
  }

  private static String render(ValidationMessage m) {
    String path = m.getInstanceLocation().toString();
    String text = m.getMessage();
    // The library prefixes its message with the instance location already; keep one prefix.
    if (text.startsWith(path + ": ")) {
      return text;
    }
    return path + ": " + text;
  }
}
