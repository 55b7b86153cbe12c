package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.driver.ResolvedCapsule;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which of a capsule's tools a run offers (docs/runner-protocol.md: {@code
 * invocation.allowed_tools} "narrows the capsule's bridged tools to that subset; it never widens").
 * Pure, apart from {@link #forRun}, which also tells the run's journal.
 *
 * @param offered the capsule's tools that are allowed, in manifest order, without duplicates; empty
 *     means no bridge is started
 * @param unknown the allowed names the capsule does not have, in request order, without duplicates:
 *     ignored, and worth a warning ({@code W-TOOL-010})
 */
record ToolNarrowing(List<String> offered, List<String> unknown) {

  ToolNarrowing {
    offered = List.copyOf(offered);
    unknown = List.copyOf(unknown);
  }

  /**
   * The narrowing of one run: traced ({@code tool_narrowing}) when the request narrows, and a
   * warning {@code W-TOOL-010} for the names the capsule does not have.
   */
  static ToolNarrowing forRun(ResolvedCapsule capsule, RunRequest request, RunJournal journal) {
    Optional<List<String>> allowed = request.allowedTools();
    ToolNarrowing n = of(capsule.manifest().capabilities().shell().allow(), allowed);
    allowed.ifPresent(
        a ->
            journal.trace(
                TraceRecord.of("tool_narrowing").with("allowed", a).with("offered", n.offered())));
    n.warning().ifPresent(m -> journal.warn(Code.W_TOOL_010, m));
    return n;
  }

  /** The {@code W-TOOL-010} message naming the ignored names; empty when there are none. */
  Optional<String> warning() {
    if (unknown.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        "invocation.allowed_tools names "
            + String.join(", ", unknown)
            + ", not a tool of this capsule; ignored");
  }

  /**
   * @param capsuleTools the capsule's {@code capabilities.shell.allow}
   * @param allowed the request's narrowing; empty offers every tool of the capsule
   */
  static ToolNarrowing of(List<String> capsuleTools, Optional<List<String>> allowed) {
    Set<String> own = new LinkedHashSet<>(capsuleTools);
    if (allowed.isEmpty()) {
      return new ToolNarrowing(List.copyOf(own), List.of());
    }
    Set<String> wanted = new LinkedHashSet<>(allowed.get());
    List<String> offered = new ArrayList<>();
    for (String name : own) {
      if (wanted.contains(name)) {
        offered.add(name);
      }
    }
    List<String> unknown = new ArrayList<>();
    for (String name : wanted) {
      if (!own.contains(name)) {
        unknown.add(name);
      }
    }
    return new ToolNarrowing(offered, unknown);
  }
}
