package io.capsule.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.ErrorFrame;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.frame.UsageSplit;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class FrameCodecTest {
  private final FrameCodec codec = FrameCodec.shared();

  /** Compact frames in the codec's field order, with unknown fields at top level and inside. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"type\":\"hello\",\"schema_version\":1,\"protocol_version\":1,\"project_id\":\"p-1\","
            + "\"runner_version\":\"0.1.0\",\"capabilities\":[\"ack\",\"future-x\"],"
            + "\"resume\":{\"T-1\":3,\"T-0\":1},\"zone\":{\"a\":[1,2.50,null]},\"n\":1.0}",
        "{\"type\":\"task.assign\",\"schema_version\":1,\"task\":{\"schema_version\":1,"
            + "\"id\":\"T-1\",\"type\":\"feature\",\"goal\":\"g\",\"criteria\":[{\"id\":\"c1\","
            + "\"text\":\"t\",\"weight\":0.25}],\"budget\":{\"iterations\":2,\"wall\":\"1h\"},"
            + "\"novel\":{\"deep\":[true]}},\"role\":\"coder-9\",\"invocation\":{\"backend\":"
            + "\"capsule:hello\",\"model\":\"\",\"budget\":{\"max_turns\":3},\"later\":1},"
            + "\"seq\":1,\"trace_id\":\"abc\"}",
        "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T-1\",\"seq\":7,"
            + "\"kind\":\"brand-new-kind\",\"payload\":{\"text\":\"hi\",\"x\":[1,{\"y\":-0.5}]},"
            + "\"extra\":\"kept\"}",
        "{\"type\":\"task.report\",\"schema_version\":1,\"report\":{\"schema_version\":1,"
            + "\"task_id\":\"T-1\",\"status\":\"half-done\",\"usage\":{\"cache_read\":1,"
            + "\"cache_write\":2,\"fresh_input\":3,\"output\":4,\"thinking\":5},"
            + "\"controls\":{\"lint\":{\"status\":\"ok\",\"why\":\"x\"}},\"future\":1},\"seq\":9,"
            + "\"late\":[]}",
        "{\"type\":\"task.cancel\",\"schema_version\":1,\"task_id\":\"T-1\",\"reason\":\"r\","
            + "\"seq\":2,\"by\":\"operator\"}",
        "{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"n-1\",\"t\":123}",
        "{\"type\":\"pong\",\"schema_version\":1,\"nonce\":\"n-1\"}",
        "{\"type\":\"ack\",\"schema_version\":1,\"acks\":{\"T-1\":4},\"window\":64}",
        "{\"type\":\"error\",\"schema_version\":1,\"code\":\"E-PRO-004\",\"message\":\"m\","
            + "\"ref_seq\":3,\"detail\":{\"k\":\"v\"}}",
      })
  void reEmitsFramesWithUnknownFieldsByteForByte(String wire) {
    byte[] bytes = wire.getBytes(StandardCharsets.UTF_8);
    Frame frame = codec.decode(bytes, true);
    assertArrayEquals(bytes, codec.encode(frame), () -> new String(codec.encode(frame)));
  }

  @Test
  void keepsUnknownTopLevelFieldsAsExtras() {
    Frame f =
        codec.decode(
            "{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"n\",\"later\":{\"a\":1}}", true);
    Ping ping = assertInstanceOf(Ping.class, f);
    assertEquals("n", ping.nonce());
    assertEquals("{\"a\":1}", ping.extra().fields().get("later").toString());
  }

  @Test
  void encodesEveryFrameTheRuntimeBuildsSoThatItValidates() {
    TaskSpec spec =
        TaskSpec.builder("T-1", "feature", "Say hello").criterion("c1", "greets").build();
    Invocation inv =
        Invocation.builder("capsule:hello")
            .model("m")
            .session("s-1")
            .allowedTools(List.of("read"))
            .budget(3L, 1000L)
            .build();
    TaskReportBody report =
        TaskReportBody.builder("T-1", "done", new UsageSplit(1, 2, 3, 4, 5))
            .summaryBusiness("hello")
            .build();
    List<Frame> frames =
        List.of(
            new Hello("p", "0.1.0", List.of("ack", "error-frames"), Map.of()),
            new TaskAssign(spec, "coder", inv).withSeq(1),
            new TaskProgress("T-1", "text", codec.mapper().createObjectNode().put("t", "x"))
                .withSeq(2),
            new TaskReport(report).withSeq(3),
            new TaskCancel("T-1", "stop").withSeq(2),
            new Ping("1"),
            new Ack(Map.of("T-1", 3L)),
            new ErrorFrame("E-PRO-002", "unknown", OptionalLong.of(4), null));
    for (Frame f : frames) {
      Frame back = codec.decode(codec.encode(f), true);
      assertEquals(f, back);
    }
  }

  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "not json at all | E-PRO-001",
        "[1,2] | E-PRO-001",
        "{\"type\":\"ping\" | E-PRO-001",
        "{\"schema_version\":1} | E-PRO-004",
        "{\"type\":\"task.explode\",\"schema_version\":1} | E-PRO-002",
        "{\"type\":\"ping\",\"schema_version\":2,\"nonce\":\"n\"} | E-PRO-003",
        "{\"type\":\"ping\",\"nonce\":\"n\"} | E-PRO-003",
        "{\"type\":\"ping\",\"schema_version\":1} | E-PRO-004",
        "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":0,"
            + "\"kind\":\"k\",\"payload\":1} | E-PRO-004",
      })
  void refusesBadFramesWithTheirCode(String wire, String code) {
    FrameRejected e = assertThrows(FrameRejected.class, () -> codec.decode(wire, true));
    assertEquals(code, e.code().id(), e.getMessage());
  }

  @Test
  void validationErrorsNameTheJsonPathAndComeSorted() {
    String wire =
        "{\"type\":\"task.report\",\"schema_version\":1,\"seq\":1,\"report\":{\"schema_version\":1,"
            + "\"task_id\":\"T-1\",\"status\":\"done\",\"usage\":{\"cache_read\":-1,"
            + "\"cache_write\":0,\"fresh_input\":0,\"output\":0,\"thinking\":0,\"bonus\":1}}}";
    FrameRejected e = assertThrows(FrameRejected.class, () -> codec.decode(wire, true));
    assertEquals(Code.E_PRO_004, e.code());
    String[] parts = e.diagnostic().message().split("; ");
    assertEquals(2, parts.length, e.getMessage());
    assertEquals("$.report.usage.cache_read: must have a minimum value of 0", parts[0]);
    assertTrue(parts[1].startsWith("$.report.usage"), parts[1]);
    assertTrue(parts[1].contains("bonus"), parts[1]);
    assertEquals(List.of(parts[0], parts[1]), List.of(parts).stream().sorted().toList());
  }

  @Test
  void decodesWithoutValidationWhenOnlyTheStructureIsNeeded() {
    String wire =
        "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":0,"
            + "\"kind\":\"\",\"payload\":null}";
    TaskProgress p = assertInstanceOf(TaskProgress.class, codec.decode(wire, false));
    assertEquals(0, p.seq());
  }
}
