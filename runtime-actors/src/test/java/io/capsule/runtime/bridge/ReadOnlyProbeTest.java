package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.capsule.runtime.harness.ProcessGroup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bridge's read-only probe, with stand-in commands: bounded even when a child keeps its output
 * open, and nothing it started outlives it. Before, it read the output to its end with no bound (a
 * child holding the pipe held the bridge's start) and killed only the leader.
 */
class ReadOnlyProbeTest {

  /** Far above the bound: a probe that waits on its child's pipe would show here. */
  private static final Duration LIMIT = Duration.ofSeconds(15);

  @TempDir Path dir;

  private List<String> group(String script) {
    return List.of(ToolCommand.SETSID.toString(), "/bin/sh", "-c", script, "probe");
  }

  private long pgid(Path pidFile) throws Exception {
    return Long.parseLong(Files.readString(pidFile).trim());
  }

  @Test
  void aProbeWhoseChildHoldsItsOutputEndsAtItsBoundAndLeavesNothing() throws Exception {
    Path pid = dir.resolve("pid");
    CallGate.ReadOnly verdict =
        assertTimeoutPreemptively(
            LIMIT,
            () ->
                ToolBridge.probe(
                    group("echo $$ > " + pid + "; sleep 60 & sleep 60"),
                    dir,
                    Duration.ofMillis(300)));
    assertEquals(CallGate.ReadOnly.UNENFORCEABLE, verdict);
    assertEquals(List.of(), ProcessGroup.liveMembers(pgid(pid)));
  }

  @Test
  void aCleanExitIsEnforcedAndWhatTheProbeLeftRunningIsKilled() throws Exception {
    Path pid = dir.resolve("pid");
    CallGate.ReadOnly verdict =
        assertTimeoutPreemptively(
            LIMIT,
            () ->
                ToolBridge.probe(
                    group("echo $$ > " + pid + "; sleep 60 >/dev/null 2>&1 & exit 0"),
                    dir,
                    Duration.ofSeconds(10)));
    assertEquals(CallGate.ReadOnly.ENFORCED, verdict);
    assertEquals(List.of(), ProcessGroup.liveMembers(pgid(pid)));
  }

  @Test
  void aFailedExitFailsClosed() {
    assertEquals(
        CallGate.ReadOnly.UNENFORCEABLE,
        ToolBridge.probe(group("exit 125"), dir, Duration.ofSeconds(10)));
  }
}
