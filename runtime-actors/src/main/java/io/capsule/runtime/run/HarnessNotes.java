package io.capsule.runtime.run;

import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.harness.HarnessProcess;
import java.time.Duration;

/**
 * The trace lines a run writes about its harness's events that decide nothing (the sandbox, a
 * refused connection, an interrupt's delivery, output after the end): pure mapping from an event to
 * its line, as {@link BridgeAccounting} is for the bridge's calls. The run decides what an event
 * means; this class owns the shapes (docs/run-semantics.md §10).
 */
final class HarnessNotes {

  private HarnessNotes() {}

  /** The {@code harness_containment} line: whether the harness runs in the sandbox. */
  static TraceRecord containment(HarnessProcess.ContainmentDecided c) {
    return TraceRecord.of("harness_containment")
        .with("mode", c.mode())
        .with("contained", c.contained());
  }

  /** The {@code egress_refused} line of a connection the egress proxy refused. */
  static TraceRecord egressRefused(HarnessProcess.EgressRefused r) {
    return TraceRecord.of("egress_refused")
        .with("host", r.host())
        .with("port", r.port())
        .with("refused_so_far", r.refusedSoFar());
  }

  /**
   * The {@code harness_interrupt} line; the grace is 0 when the interrupt was not delivered (the
   * group is killed at once).
   */
  static TraceRecord interrupt(InterruptMethod method, boolean delivered, Duration grace) {
    return TraceRecord.of("harness_interrupt")
        .with("method", method.witName())
        .with("delivered", delivered)
        .with("grace_ms", delivered ? grace.toMillis() : 0);
  }

  /** The progress note of a delivered interrupt. */
  static String interruptDelivered(Duration grace) {
    return "interrupt delivered; the harness has " + grace.toMillis() + " ms to end";
  }

  /**
   * The {@code harness_note} of a batch of stdout lines that came after the run stopped parsing.
   */
  static TraceRecord linesIgnored(HarnessProcess.Lines lines) {
    return TraceRecord.of("harness_note")
        .with("note", "stdout lines after the end ignored")
        .with("lines", lines.lines().size());
  }
}
