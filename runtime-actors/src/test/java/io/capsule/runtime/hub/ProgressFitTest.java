package io.capsule.runtime.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunEventJson;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Progress and reports made to fit the frame cap: what is split, what is cut, what is kept. */
class ProgressFitTest {
  private static final int MIB = 1024 * 1024;

  private static int wireSize(SequencedFrame f) {
    return FrameCodec.shared().encode(f.withSeq(Long.MAX_VALUE)).length;
  }

  private static List<TaskProgress> fit(RunEvent e, int cap) {
    return ProgressFit.progress(e.taskId(), e.kind(), RunEventJson.toJson(e), cap);
  }

  @Test
  void theEscapedSizeOfEveryCodePointIsTheEncodersOwn() throws Exception {
    com.fasterxml.jackson.databind.ObjectMapper mapper = FrameCodec.shared().mapper();
    for (int cp = 0; cp < 0x11000; cp++) {
      if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
        continue; // a lone surrogate is not text
      }
      String s = new String(Character.toChars(cp));
      assertEquals(mapper.writeValueAsBytes(s).length - 2, ProgressFit.escapedBytes(cp), "U+" + cp);
    }
  }

  @Test
  void theQuickBoundIsNeverBelowTheEncodedSize() {
    java.util.Random rnd = new java.util.Random(5);
    String alphabet = "ab \n\t\"\\\u0001é€😀";
    for (int round = 0; round < 500; round++) {
      StringBuilder text = new StringBuilder();
      for (int i = rnd.nextInt(200); i > 0; i--) {
        int at = rnd.nextInt(alphabet.length() - 1);
        text.append(alphabet, at, Character.isHighSurrogate(alphabet.charAt(at)) ? at + 2 : at + 1);
      }
      RunEvent e =
          round % 2 == 0
              ? new RunEvent.ToolCalled("T-" + round, "c" + round, text.toString(), "{}", round)
              : new RunEvent.TextDelta("T-" + round, text.toString(), text.toString());
      ObjectNode payload = RunEventJson.toJson(e);
      long bound =
          160 + 6 * (e.taskId().length() + e.kind().length()) + 4 + ProgressFit.maxBytes(payload);
      int actual = wireSize(new TaskProgress(e.taskId(), e.kind(), payload));
      assertTrue(actual <= bound, actual + " > " + bound + " for " + payload);
    }
  }

  @Test
  void aSmallDeltaIsOneFrameWithoutTheQuadraticSoFar() {
    List<TaskProgress> frames = fit(new RunEvent.TextDelta("T", " world", "hello world"), MIB);
    assertEquals(1, frames.size());
    ObjectNode p = (ObjectNode) frames.get(0).payload();
    assertEquals(" world", p.get("delta").asText());
    assertFalse(p.has("so_far"), "the hub concatenates the deltas itself");
    assertFalse(RunEventJson.toJson(new RunEvent.ThinkingDelta("T", "b", "ab")).has("so_far"));
    assertEquals("text_delta", p.get("event").asText());
  }

  @Test
  void aSmallEventOtherThanADeltaIsSentWhole() {
    RunEvent e = new RunEvent.TextCompleted("T", "the whole text");
    List<TaskProgress> frames = fit(e, MIB);
    assertEquals(List.of(RunEventJson.toJson(e)), frames.stream().map(f -> f.payload()).toList());
  }

  static Stream<Arguments> deltas() {
    String ascii = "abcdefghij".repeat(300_000); // 3 MB
    String mixed = "é😀\n\"\\\u0001x".repeat(2_000); // 2- and 4-byte, escaped and control chars
    return Stream.of(
        Arguments.of("3 MB of ASCII, 1 MiB cap", ascii, MIB),
        Arguments.of("3 MB of ASCII, 64 KiB cap", ascii, 64 * 1024),
        Arguments.of("escapes and surrogate pairs, 512 B cap", mixed, 512),
        Arguments.of("escapes and surrogate pairs, 4 KiB cap", mixed, 4096));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("deltas")
  void aDeltaTooBigForOneFrameIsSplitLosingNothing(String name, String delta, int cap) {
    List<TaskProgress> frames = fit(new RunEvent.ThinkingDelta("T", delta, delta), cap);
    assertTrue(frames.size() > 1, name);
    StringBuilder joined = new StringBuilder();
    for (TaskProgress f : frames) {
      assertTrue(wireSize(f) <= cap, name + ": " + wireSize(f) + " > " + cap);
      assertEquals("thinking", f.kind());
      String piece = f.payload().get("delta").asText();
      assertFalse(Character.isLowSurrogate(piece.charAt(0)), "never splits a surrogate pair");
      joined.append(piece);
    }
    assertEquals(delta, joined.toString(), name);
  }

  @Test
  void aToolResultTooBigIsCutSayingHowManyBytesWentMissing() {
    String output = "line of output\n".repeat(200_000); // 3 MB
    List<TaskProgress> frames = fit(new RunEvent.ToolResulted("T", "call-1", output, false), MIB);
    assertEquals(1, frames.size());
    TaskProgress f = frames.get(0);
    assertTrue(wireSize(f) <= MIB);
    assertTrue(wireSize(f) > MIB - 4096, "keeps as much as fits: " + wireSize(f));
    String kept = f.payload().get("output").asText();
    assertTrue(kept.endsWith("…"));
    String prefix = kept.substring(0, kept.length() - 1);
    assertTrue(output.startsWith(prefix));
    assertEquals(
        output.getBytes(StandardCharsets.UTF_8).length
            - prefix.getBytes(StandardCharsets.UTF_8).length,
        f.payload().get("truncated_bytes").asLong());
    assertEquals("call-1", f.payload().get("call_id").asText(), "the short fields stay whole");
  }

  @Test
  void aReportWithAHugeResultStillFitsAndSaysItWasCut() {
    String result = "x".repeat(3 * MIB);
    TaskReportBody body =
        TaskReportBody.builder("T", "done", new UsageSplit(1, 2, 3, 4, 5))
            .summaryBusiness(result)
            .iterations(7)
            .build();
    TaskReport fitted = ProgressFit.report(body, MIB);
    assertTrue(wireSize(fitted) <= MIB);
    String summary = fitted.report().json().get("summary_business").asText();
    assertTrue(summary.startsWith("xxxx"));
    assertTrue(summary.contains("bytes cut to fit the frame cap"), summary.substring(0, 10));
    assertEquals("done", fitted.report().status());
    assertEquals(new UsageSplit(1, 2, 3, 4, 5), fitted.report().usage());
    assertEquals(7, fitted.report().json().get("iterations").asInt());
  }

  @Test
  void aReportThatFitsIsUntouched() {
    TaskReportBody body =
        TaskReportBody.builder("T", "done", UsageSplit.ZERO).summaryBusiness("hi").build();
    assertEquals(body.json(), ProgressFit.report(body, MIB).report().json());
  }
}
