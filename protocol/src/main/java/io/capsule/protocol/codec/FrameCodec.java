package io.capsule.protocol.codec;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.ErrorFrame;
import io.capsule.protocol.frame.Extras;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.schema.Schemas;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Encodes frames to compact UTF-8 JSON and decodes them back, dispatching on {@code type}.
 *
 * <p>Decoding refuses, with a {@link FrameRejected}: non-JSON or a non-object ({@code E-PRO-001}),
 * an unknown type ({@code E-PRO-002}), a {@code schema_version} other than 1 ({@code E-PRO-003}),
 * and a missing or mistyped field ({@code E-PRO-004}; with {@code validate} the whole frame is
 * checked against its JSON Schema, bodies included).
 *
 * <p>Forward compatibility: unknown top-level fields are kept in {@link Frame#extra()} and written
 * after the known ones; bodies (task, report, invocation, payload) are kept whole. A compact frame
 * whose known fields come in the order this codec writes them (type, schema_version, then the
 * spec's order) re-encodes to the same bytes. Numbers keep their written precision ({@code 1.50}
 * stays {@code 1.50}); only exponent spelling may be normalised.
 *
 * <p>Thread-safe and stateless; share one instance.
 */
public final class FrameCodec {

  private static final FrameCodec SHARED = new FrameCodec();

  private final ObjectMapper mapper =
      JsonMapper.builder()
          .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .build();

  /** The shared instance. */
  public static FrameCodec shared() {
    return SHARED;
  }

  /** The mapper the codec reads and writes with (for callers that build payloads). */
  public ObjectMapper mapper() {
    return mapper;
  }

  public byte[] encode(Frame frame) {
    ByteArrayBuilder out = new ByteArrayBuilder(256);
    try (JsonGenerator g = mapper.getFactory().createGenerator(out, JsonEncoding.UTF8)) {
      FrameWriter.write(frame, g);
    } catch (IOException e) {
      throw new UncheckedIOException("encoding to memory cannot fail", e);
    }
    return out.toByteArray();
  }

  public String encodeToString(Frame frame) {
    return new String(encode(frame), StandardCharsets.UTF_8);
  }

  /** Decodes without schema validation (structure only). */
  public Frame decode(byte[] bytes) {
    return decode(bytes, false);
  }

  public Frame decode(String text, boolean validate) {
    return decode(text.getBytes(StandardCharsets.UTF_8), validate);
  }

  public Frame decode(byte[] bytes, boolean validate) {
    JsonNode root;
    try {
      root = mapper.readTree(bytes);
    } catch (JsonProcessingException e) {
      throw new FrameRejected(Code.E_PRO_001, "malformed JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new FrameRejected(Code.E_PRO_001, "unreadable frame: " + e.getMessage(), e);
    }
    return decode(root, validate);
  }

  /** Decodes an already parsed frame. */
  public Frame decode(JsonNode root, boolean validate) {
    if (root == null || !root.isObject()) {
      throw new FrameRejected(Code.E_PRO_001, "a frame must be one JSON object");
    }
    JsonNode typeNode = root.get("type");
    if (typeNode == null || !typeNode.isTextual()) {
      throw new FrameRejected(Code.E_PRO_004, "$.type: a string is required");
    }
    String type = typeNode.textValue();
    Schemas.Id schema = Schemas.Id.forFrameType(type);
    if (schema == null) {
      throw new FrameRejected(Code.E_PRO_002, "unknown frame type '" + type + "'");
    }
    JsonNode version = root.get("schema_version");
    if (version == null || !version.canConvertToExactIntegral() || version.intValue() != 1) {
      throw new FrameRejected(
          Code.E_PRO_003,
          "schema_version must be 1, was " + (version == null ? "absent" : version.toString()));
    }
    if (validate) {
      List<String> errors = Schemas.validate(schema, root);
      if (!errors.isEmpty()) {
        throw new FrameRejected(Code.E_PRO_004, String.join("; ", errors));
      }
    }
    return FrameReader.read(type, root);
  }

  /** Known top-level keys of each type, in the order {@link FrameWriter} writes them. */
  static final Map<String, List<String>> KNOWN =
      Map.of(
          Hello.TYPE,
          List.of(
              "type",
              "schema_version",
              "protocol_version",
              "project_id",
              "runner_version",
              "capabilities",
              "resume"),
          TaskAssign.TYPE,
          List.of("type", "schema_version", "task", "role", "invocation", "seq"),
          TaskProgress.TYPE,
          List.of("type", "schema_version", "task_id", "seq", "kind", "payload"),
          TaskReport.TYPE,
          List.of("type", "schema_version", "report", "seq"),
          TaskCancel.TYPE,
          List.of("type", "schema_version", "task_id", "reason", "seq"),
          Ping.TYPE,
          List.of("type", "schema_version", "nonce"),
          Pong.TYPE,
          List.of("type", "schema_version", "nonce"),
          Ack.TYPE,
          List.of("type", "schema_version", "acks"),
          ErrorFrame.TYPE,
          List.of("type", "schema_version", "code", "message", "ref_seq"));

  static Extras extrasOf(String type, JsonNode root) {
    List<String> known = KNOWN.get(type);
    if (root.size() == countKnown(known, root)) {
      return Extras.NONE;
    }
    var extra = new java.util.LinkedHashMap<String, JsonNode>();
    for (var e : root.properties()) {
      if (!known.contains(e.getKey())) {
        extra.put(e.getKey(), e.getValue());
      }
    }
    return Extras.of(extra);
  }

  private static int countKnown(List<String> known, JsonNode root) {
    int n = 0;
    for (String k : known) {
      if (root.has(k)) {
        n++;
      }
    }
    return n;
  }
}
