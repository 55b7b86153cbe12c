package io.capsule.protocol.frame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.schema.Schemas;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A task's report (stapel-taskspecs v1 TaskReport): {@code task_id}, {@code status} (open string:
 * {@code done}, {@code blocked}, {@code failed}, …), {@code usage} (always present), optional
 * summary, files, controls, commits, questions, failure type and iterations; unknown keys kept.
 */
public final class TaskReportBody extends JsonBody {

  private TaskReportBody(ObjectNode json) {
    super(json);
  }

  /** Validates against {@code task-report.json}; refuses with {@code E-PRO-004}. */
  public static TaskReportBody of(JsonNode json) {
    return new TaskReportBody(Bodies.checked(Schemas.Id.TASK_REPORT, json, "report"));
  }

  /** Takes the node as is (copied), without schema validation; it needs a {@code task_id}. */
  public static TaskReportBody wrap(ObjectNode json) {
    return new TaskReportBody(Bodies.withId(json, "task_id", "report"));
  }

  public String taskId() {
    return text("task_id");
  }

  public String status() {
    return text("status");
  }

  /** The usage; {@link UsageSplit#ZERO} when an unvalidated body lacks it. */
  public UsageSplit usage() {
    JsonNode u = node("usage");
    return u == null ? UsageSplit.ZERO : UsageSplit.fromJson(u);
  }

  public Optional<String> summaryBusiness() {
    return optionalText("summary_business");
  }

  public Optional<String> failureType() {
    return optionalText("failure_type");
  }

  public OptionalLong iterations() {
    return optionalLong("iterations");
  }

  public List<String> filesChanged() {
    return texts("files_changed");
  }

  @Override
  Schemas.Id schema() {
    return Schemas.Id.TASK_REPORT;
  }

  public static Builder builder(String taskId, String status, UsageSplit usage) {
    return new Builder(taskId, status, usage);
  }

  /** Builds a report; keys appear in the order they are set. */
  public static final class Builder {
    private final ObjectNode json = JsonNodeFactory.instance.objectNode();

    private Builder(String taskId, String status, UsageSplit usage) {
      json.put("schema_version", 1);
      json.put("task_id", taskId);
      json.put("status", status);
      json.set("usage", usage.toJson());
    }

    public Builder summaryBusiness(String summary) {
      json.put("summary_business", summary);
      return this;
    }

    public Builder failureType(String failureType) {
      json.put("failure_type", failureType);
      return this;
    }

    public Builder iterations(long iterations) {
      json.put("iterations", iterations);
      return this;
    }

    public Builder filesChanged(List<String> files) {
      files.forEach(json.putArray("files_changed")::add);
      return this;
    }

    /** Any other key, known to the spec (controls, commits, …) or not. */
    public Builder put(String key, JsonNode value) {
      json.set(key, value);
      return this;
    }

    public TaskReportBody build() {
      return TaskReportBody.of(json);
    }
  }
}
