package io.capsule.protocol.codec;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.ErrorFrame;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import java.io.IOException;
import java.util.Map;

/** Streams a frame as JSON: type, schema_version, the known fields in spec order, then extras. */
final class FrameWriter {
  private FrameWriter() {}

  static void write(Frame frame, JsonGenerator g) throws IOException {
    g.writeStartObject();
    g.writeStringField("type", frame.type());
    g.writeNumberField("schema_version", Frame.SCHEMA_VERSION);
    if (frame instanceof TaskProgress p) {
      // First: by far the most frequent frame.
      g.writeStringField("task_id", p.taskId());
      g.writeNumberField("seq", p.seq());
      g.writeStringField("kind", p.kind());
      g.writeFieldName("payload");
      g.writeTree(p.payload());
    } else if (frame instanceof Hello h) {
      g.writeNumberField("protocol_version", h.protocolVersion());
      g.writeStringField("project_id", h.projectId());
      g.writeStringField("runner_version", h.runnerVersion());
      g.writeArrayFieldStart("capabilities");
      for (String c : h.capabilities()) {
        g.writeString(c);
      }
      g.writeEndArray();
      writeSeqMap(g, "resume", h.resume());
    } else if (frame instanceof TaskAssign a) {
      g.writeFieldName("task");
      a.task().writeTo(g);
      g.writeStringField("role", a.role());
      g.writeFieldName("invocation");
      a.invocation().writeTo(g);
      g.writeNumberField("seq", a.seq());
    } else if (frame instanceof TaskReport r) {
      g.writeFieldName("report");
      r.report().writeTo(g);
      g.writeNumberField("seq", r.seq());
    } else if (frame instanceof TaskCancel c) {
      g.writeStringField("task_id", c.taskId());
      g.writeStringField("reason", c.reason());
      g.writeNumberField("seq", c.seq());
    } else if (frame instanceof Ping p) {
      g.writeStringField("nonce", p.nonce());
    } else if (frame instanceof Pong p) {
      g.writeStringField("nonce", p.nonce());
    } else if (frame instanceof Ack a) {
      writeSeqMap(g, "acks", a.acks());
    } else if (frame instanceof ErrorFrame e) {
      g.writeStringField("code", e.code());
      g.writeStringField("message", e.message());
      if (e.refSeq().isPresent()) {
        g.writeNumberField("ref_seq", e.refSeq().getAsLong());
      }
    } else {
      throw new IllegalArgumentException("unknown frame " + frame.getClass());
    }
    for (Map.Entry<String, JsonNode> e : frame.extra().fields().entrySet()) {
      g.writeFieldName(e.getKey());
      g.writeTree(e.getValue());
    }
    g.writeEndObject();
  }

  private static void writeSeqMap(JsonGenerator g, String name, Map<String, Long> map)
      throws IOException {
    g.writeObjectFieldStart(name);
    for (Map.Entry<String, Long> e : map.entrySet()) {
      g.writeNumberField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
  }
}
