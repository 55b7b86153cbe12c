package io.capsule.protocol.frame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import java.util.Objects;

/**
 * runner → hub: something happened in the task's run. {@code kind} is an open string ({@code
 * state}, {@code text}, {@code tool}, {@code usage}, …); {@code payload} any JSON value, read-only
 * by contract.
 */
public record TaskProgress(String taskId, long seq, String kind, JsonNode payload, Extras extra)
    implements SequencedFrame {
  public static final String TYPE = "task.progress";

  public TaskProgress {
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(kind, "kind");
    payload = payload == null ? NullNode.getInstance() : payload;
    extra = extra == null ? Extras.NONE : extra;
  }

  public TaskProgress(String taskId, String kind, JsonNode payload) {
    this(taskId, 0, kind, payload, Extras.NONE);
  }

  @Override
  public TaskProgress withSeq(long newSeq) {
    return new TaskProgress(taskId, newSeq, kind, payload, extra);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
