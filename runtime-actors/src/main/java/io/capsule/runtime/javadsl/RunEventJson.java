package io.capsule.runtime.javadsl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import io.capsule.protocol.frame.UsageSplit;
import java.util.Set;

/**
 * The one JSON form of a run event: {@code capsule run --json} prints it, one object per line, and
 * the hub link sends it as the {@code task.progress} payload (made to fit the frame cap: long
 * deltas split, other long strings cut). A {@code text_delta} / {@code thinking_delta} carries only
 * its {@code delta}, not the record's {@code soFar}: a reader gets every delta in order and
 * concatenates, and repeating the whole message in every line made the output quadratic in the
 * message's length. Each object has {@code "event"} (the record's name in snake case, e.g. {@code
 * text_delta}), {@code "kind"} (the runner protocol's progress kind) and the record's fields in
 * snake case; an absent optional is {@code null}. A {@code usage} member the driver never reported
 * is {@code null}, not 0 (docs/run-semantics.md §7). The last line is always {@code
 * "event":"finished"} with the outcome.
 */
public final class RunEventJson {
  private static final ObjectMapper MAPPER =
      new ObjectMapper()
          .registerModule(new Jdk8Module())
          .setPropertyNamingStrategy(
              com.fasterxml.jackson.databind.PropertyNamingStrategies.SNAKE_CASE);

  private RunEventJson() {}

  /** The event as one compact JSON line. */
  public static String line(RunEvent event) {
    try {
      return MAPPER.writeValueAsString(toJson(event));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a tree always serializes", e);
    }
  }

  /** The event as a JSON object. */
  public static ObjectNode toJson(RunEvent event) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("event", snake(event.getClass().getSimpleName()));
    node.put("kind", event.kind());
    if (event instanceof RunEvent.Finished f) {
      node.setAll(outcome(f.outcome()));
    } else if (event instanceof RunEvent.StateChanged s) {
      node.put("task_id", s.taskId());
      node.put("phase", s.phase().wire());
    } else {
      node.setAll((ObjectNode) MAPPER.valueToTree(event));
      if (event instanceof RunEvent.TextDelta || event instanceof RunEvent.ThinkingDelta) {
        node.remove("so_far"); // see the class comment
      }
      if (event instanceof RunEvent.UsageUpdated u) {
        node.remove("unreported");
        node.set("usage", usage(u.usage(), u.unreported()));
      }
    }
    return node;
  }

  /** The outcome's fields, as the {@code finished} line carries them. */
  public static ObjectNode outcome(RunOutcome o) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("task_id", o.taskId());
    n.put("status", o.status().wire());
    n.put("result", o.result().orElse(null));
    n.put("turns", o.turns());
    n.set("usage", usage(o.usage(), o.unreported()));
    n.put("code", o.code().orElse(null));
    n.put("failure_type", o.failureType().orElse(null));
    n.put("message", o.message());
    n.put("session_id", o.sessionId().orElse(null));
    n.put("duration_ms", o.duration().toMillis());
    return n;
  }

  /** The wire split with each member the driver never reported as {@code null}. */
  private static ObjectNode usage(UsageSplit split, Set<String> unreported) {
    ObjectNode n = split.toJson();
    unreported.forEach(n::putNull);
    return n;
  }

  private static String snake(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
  }
}
