package io.capsule.protocol.codec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.ErrorFrame;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Maps a parsed frame object onto its record. Checks only what the record needs (present, right
 * JSON type) so an unvalidated decode is cheap; full checks are the schema's job.
 */
final class FrameReader {
  private FrameReader() {}

  static Frame read(String type, JsonNode root) {
    var extra = FrameCodec.extrasOf(type, root);
    return switch (type) {
      case Hello.TYPE ->
          new Hello(
              (int) integer(root, "protocol_version"),
              text(root, "project_id"),
              text(root, "runner_version"),
              texts(root, "capabilities"),
              seqMap(root, "resume"),
              extra);
      case TaskAssign.TYPE ->
          new TaskAssign(
              TaskSpec.wrap(object(root, "task")),
              text(root, "role"),
              Invocation.wrap(object(root, "invocation")),
              integer(root, "seq"),
              extra);
      case TaskProgress.TYPE ->
          new TaskProgress(
              text(root, "task_id"),
              integer(root, "seq"),
              text(root, "kind"),
              required(root, "payload"),
              extra);
      case TaskReport.TYPE ->
          new TaskReport(TaskReportBody.wrap(object(root, "report")), integer(root, "seq"), extra);
      case TaskCancel.TYPE ->
          new TaskCancel(text(root, "task_id"), text(root, "reason"), integer(root, "seq"), extra);
      case Ping.TYPE -> new Ping(text(root, "nonce"), extra);
      case Pong.TYPE -> new Pong(text(root, "nonce"), extra);
      case Ack.TYPE -> new Ack(seqMap(root, "acks"), extra);
      case ErrorFrame.TYPE ->
          new ErrorFrame(
              text(root, "code"),
              text(root, "message"),
              root.has("ref_seq")
                  ? OptionalLong.of(integer(root, "ref_seq"))
                  : OptionalLong.empty(),
              extra);
      default -> throw new FrameRejected(Code.E_PRO_002, "unknown frame type '" + type + "'");
    };
  }

  private static JsonNode required(JsonNode root, String key) {
    JsonNode v = root.get(key);
    if (v == null) {
      throw invalid(key, "is required");
    }
    return v;
  }

  private static String text(JsonNode root, String key) {
    JsonNode v = required(root, key);
    if (!v.isTextual()) {
      throw invalid(key, "must be a string");
    }
    return v.textValue();
  }

  private static long integer(JsonNode root, String key) {
    JsonNode v = required(root, key);
    if (!v.canConvertToExactIntegral() || !v.canConvertToLong()) {
      throw invalid(key, "must be an integer");
    }
    return v.longValue();
  }

  private static ObjectNode object(JsonNode root, String key) {
    JsonNode v = required(root, key);
    if (!v.isObject()) {
      throw invalid(key, "must be an object");
    }
    return (ObjectNode) v;
  }

  private static List<String> texts(JsonNode root, String key) {
    JsonNode v = required(root, key);
    if (!v.isArray()) {
      throw invalid(key, "must be an array of strings");
    }
    List<String> out = new ArrayList<>(v.size());
    for (JsonNode e : v) {
      if (!e.isTextual()) {
        throw invalid(key, "must be an array of strings");
      }
      out.add(e.textValue());
    }
    return out;
  }

  private static Map<String, Long> seqMap(JsonNode root, String key) {
    JsonNode v = object(root, key);
    Map<String, Long> out = new LinkedHashMap<>();
    for (var e : v.properties()) {
      if (!e.getValue().canConvertToExactIntegral() || e.getValue().longValue() < 0) {
        throw invalid(key + "." + e.getKey(), "must be a non-negative integer");
      }
      out.put(e.getKey(), e.getValue().longValue());
    }
    return out;
  }

  private static FrameRejected invalid(String key, String what) {
    return new FrameRejected(Code.E_PRO_004, "$." + key + ": " + what);
  }
}
