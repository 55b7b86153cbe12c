package io.capsule.hub.runner;

import java.util.List;
import java.util.Set;

/**
 * A snapshot of one runner the hub knows.
 *
 * @param connected whether a connection that said hello is open now
 * @param openTasks tasks assigned to it whose report has not arrived
 */
public record RunnerInfo(
    RunnerKey key,
    boolean connected,
    String runnerVersion,
    List<String> capabilities,
    Set<String> openTasks) {
  public RunnerInfo {
    capabilities = List.copyOf(capabilities);
    openTasks = Set.copyOf(openTasks);
  }
}
