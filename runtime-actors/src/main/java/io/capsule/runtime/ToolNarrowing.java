package io.capsule.runtime;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which of a capsule's tools a run offers (runner-protocol.md: {@code invocation.allowed_tools}
 * "narrows the capsule's bridged tools to that subset; it never widens"). Pure.
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
