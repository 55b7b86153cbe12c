package io.capsule.protocol.frame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.schema.Schemas;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A task (stapel-taskspecs v1 TaskSpec): {@code id}, {@code type}, {@code goal}, {@code criteria},
 * {@code budget}, optional {@code body} and lists; unknown keys kept. Built by {@link #builder} or
 * read with {@link #of(JsonNode)} (validated) or {@link #wrap(ObjectNode)} (trusted, unvalidated).
 */
public final class TaskSpec extends JsonBody {

  /** One acceptance criterion. */
  public record Criterion(String id, String text) {}

  private TaskSpec(ObjectNode json) {
    super(json);
  }

  /** Validates against {@code task-spec.json}; refuses with {@code E-PRO-004}. */
  public static TaskSpec of(JsonNode json) {
    return new TaskSpec(Bodies.checked(Schemas.Id.TASK_SPEC, json, "task"));
  }

  /** Takes the node as is (copied), without schema validation; it must be an object with an id. */
  public static TaskSpec wrap(ObjectNode json) {
    return new TaskSpec(Bodies.withId(json, "id", "task"));
  }

  public String id() {
    return text("id");
  }

  public String taskType() {
    return text("type");
  }

  public String goal() {
    return text("goal");
  }

  public Optional<String> body() {
    return optionalText("body");
  }

  public Optional<String> status() {
    return optionalText("status");
  }

  public List<Criterion> criteria() {
    JsonNode c = node("criteria");
    List<Criterion> out = new ArrayList<>();
    if (c != null && c.isArray()) {
      c.forEach(e -> out.add(new Criterion(e.path("id").asText(), e.path("text").asText())));
    }
    return List.copyOf(out);
  }

  /** The {@code budget} object (open keys); {@code iterations} via {@link #iterations()}. */
  public JsonNode budget() {
    JsonNode b = node("budget");
    return b == null ? JsonNodeFactory.instance.objectNode() : b;
  }

  public OptionalLong iterations() {
    JsonNode it = budget().get("iterations");
    return it != null && it.canConvertToExactIntegral()
        ? OptionalLong.of(it.longValue())
        : OptionalLong.empty();
  }

  @Override
  Schemas.Id schema() {
    return Schemas.Id.TASK_SPEC;
  }

  public static Builder builder(String id, String type, String goal) {
    return new Builder(id, type, goal);
  }

  /** Builds a TaskSpec; keys appear in the order they are set. */
  public static final class Builder {
    private final ObjectNode json = JsonNodeFactory.instance.objectNode();
    private final ArrayNode criteria;
    private final ObjectNode budget;

    private Builder(String id, String type, String goal) {
      json.put("schema_version", 1);
      json.put("id", id);
      json.put("type", type);
      json.put("goal", goal);
      criteria = json.putArray("criteria");
      budget = json.putObject("budget");
      budget.put("iterations", 0);
    }

    public Builder criterion(String id, String text) {
      criteria.addObject().put("id", id).put("text", text);
      return this;
    }

    public Builder iterations(long iterations) {
      budget.put("iterations", iterations);
      return this;
    }

    public Builder body(String body) {
      json.put("body", body);
      return this;
    }

    /** Any other key, known to the spec (status, risk, …) or not. */
    public Builder put(String key, JsonNode value) {
      json.set(key, value);
      return this;
    }

    /** Builds and validates ({@code E-PRO-004} on a bad value). */
    public TaskSpec build() {
      return TaskSpec.of(json);
    }
  }
}
