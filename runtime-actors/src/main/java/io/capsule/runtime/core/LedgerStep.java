package io.capsule.runtime.core;

import io.capsule.runtime.javadsl.RunEvent;
import java.util.List;
import java.util.Optional;

/**
 * What applying one batch of events decided: progress to forward (in order), trace records to
 * write, and the ending when this batch decided one (only the batch that decides it carries it).
 */
public record LedgerStep(
    List<RunEvent> progress, List<TraceRecord> trace, Optional<Ending> ending) {

  public LedgerStep {
    progress = List.copyOf(progress);
    trace = List.copyOf(trace);
  }
}
