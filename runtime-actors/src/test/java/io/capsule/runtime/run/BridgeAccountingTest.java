package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.runtime.bridge.ToolCallEvent;
import io.capsule.runtime.bridge.ToolCallEvent.CallStatus;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.javadsl.RunEvent;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BridgeAccountingTest {

  private static ToolCallEvent.Finished finished(CallStatus status, Optional<Code> code) {
    return new ToolCallEvent.Finished(
        "call-3",
        "7",
        "grep",
        21,
        1000,
        Duration.ofMillis(42),
        status,
        status == CallStatus.OK ? Optional.of(0) : Optional.empty(),
        code.map(c -> Diagnostic.of(c, "why")));
  }

  @ParameterizedTest(name = "{0} is traced as status {1}, code {2}, with an abandon note: {3}")
  @CsvSource({
    "OK,         ok,         ,           false",
    "TOOL_ERROR, tool_error, ,           false",
    "REFUSED,    refused,    E-TOOL-005, false",
    "TIMED_OUT,  timed_out,  E-TOOL-007, false",
    "ABANDONED,  abandoned,  E-TOOL-008, true",
    "STOPPED,    stopped,    E-TOOL-008, false",
    "FAILED,     failed,     E-TOOL-009, false",
  })
  void aFinishedCallIsOneToolCallLineAndAnAbandonedOneIsNoted(
      CallStatus status, String word, String code, boolean noted) {
    Optional<Code> c = Optional.ofNullable(code).map(id -> Code.valueOf(id.replace('-', '_')));
    List<TraceRecord> lines = BridgeAccounting.trace(finished(status, c), 2);

    TraceRecord line = lines.get(0);
    assertEquals("tool_call", line.eventType());
    assertEquals(2, line.fields().get("turn"));
    assertEquals("grep", line.fields().get("name"));
    assertEquals("call-3", line.fields().get("id"));
    assertEquals(21, line.fields().get("input_bytes"));
    assertEquals(1000, line.fields().get("output_bytes"));
    assertEquals(42L, line.fields().get("duration_ms"));
    assertEquals(word, line.fields().get("status"));
    assertEquals("bridge", line.fields().get("source"));
    assertEquals(code, line.fields().get("code"));
    assertEquals(noted ? 2 : 1, lines.size());
    if (noted) {
      assertEquals("harness_note", lines.get(1).eventType());
      assertEquals("call-3", lines.get(1).fields().get("id"));
    }

    RunEvent.BridgeCall progress = BridgeAccounting.progress("t-1", finished(status, c), 2);
    assertEquals(word, progress.status());
    assertEquals(Optional.ofNullable(code), progress.code());
    assertEquals("tool", progress.kind());
  }

  @Test
  void aStartedCallIsReportedRunningAndTracedOnlyWhenItEnds() {
    var started = new ToolCallEvent.Started("call-1", "2", "echo", 30);

    assertEquals(List.of(), BridgeAccounting.trace(started, 1));
    assertEquals(
        new RunEvent.BridgeCall("t-1", "call-1", "echo", 1, "running", 30, 0, 0, Optional.empty()),
        BridgeAccounting.progress("t-1", started, 1));
  }
}
