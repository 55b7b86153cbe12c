package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The signals a harness actor sends to its group, on real process groups: what was sent decides how
 * a status in 129..192 reads, and a kill while the leader runs is the runtime's.
 */
class GroupSignalsTest {

  private final ExecutorService io = Executors.newSingleThreadExecutor();
  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void release() throws IOException {
    io.shutdownNow();
    for (Process p : started) {
      p.destroyForcibly();
      p.getInputStream().close();
    }
  }

  /**
   * A new group whose leader is a shell running {@code script}, returned once the shell runs (so
   * the group exists: before {@code setsid} has run, a signal to it finds no group).
   */
  private Process group(String script) throws IOException {
    Process leader =
        new ProcessBuilder(ProcessGroup.SETSID.toString(), "/bin/sh", "-c", "echo up; " + script)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    started.add(leader);
    BufferedReader out =
        new BufferedReader(new InputStreamReader(leader.getInputStream(), StandardCharsets.UTF_8));
    assertEquals("up", out.readLine());
    return leader;
  }

  private static ExitCode code(int code) {
    return new ExitCode(Optional.of(code), Optional.empty());
  }

  private static ExitCode signal(int signal) {
    return new ExitCode(Optional.empty(), Optional.of(signal));
  }

  @Test
  void withNothingSentEveryStatusReadsAsACode() {
    GroupSignals signals = new GroupSignals(io);
    assertEquals(code(130), signals.decode(130));
    assertEquals(code(137), signals.decode(137));
    assertFalse(signals.killedByRuntime());
  }

  @Test
  void aKillIsAskedForOnce() {
    GroupSignals signals = new GroupSignals(io);
    assertFalse(signals.killRequested());
    assertTrue(signals.requestKill());
    assertFalse(signals.requestKill());
    assertTrue(signals.killRequested());
  }

  @Test
  void anInterruptDeliveredMakes130ReadAsSigintAndNothingElse() throws Exception {
    Process leader = group("sleep 60");
    GroupSignals signals = new GroupSignals(io);
    signals.started(leader);
    try {
      assertEquals(leader.pid(), signals.pgid());
      assertTrue(signals.interrupt().get(30, TimeUnit.SECONDS), "SIGINT delivered");
      assertEquals(signal(2), signals.decode(130));
      assertEquals(code(137), signals.decode(137), "no SIGKILL was sent");
      assertFalse(signals.killedByRuntime());
    } finally {
      signals.killAll(false).get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aKillWhileTheLeaderRunsIsTheRuntimesAndLeavesNoMember() throws Exception {
    Process leader = group("sleep 60 & sleep 60; wait");
    GroupSignals signals = new GroupSignals(io);
    signals.started(leader);
    signals.killAll(false).get(30, TimeUnit.SECONDS);
    assertTrue(leader.waitFor(30, TimeUnit.SECONDS), "the leader is gone");
    assertEquals(List.of(), ProcessGroup.liveMembers(leader.pid()));
    assertTrue(signals.killedByRuntime());
    assertEquals(signal(9), signals.decode(137));
  }

  @Test
  void aKillAfterTheLeaderExitedIsNotTheRuntimes() throws Exception {
    Process leader = group("exit 0");
    assertTrue(leader.waitFor(30, TimeUnit.SECONDS));
    GroupSignals signals = new GroupSignals(io);
    signals.started(leader);
    signals.killAll(true).get(30, TimeUnit.SECONDS);
    assertFalse(signals.killedByRuntime());
    assertEquals(code(137), signals.decode(137));
  }

  @Test
  void anExitedLeaderThatLeftNothingIsFoundGoneWithoutTheExecutor() throws Exception {
    Process leader = group("exit 0");
    assertTrue(leader.waitFor(30, TimeUnit.SECONDS));
    List<Runnable> tasks = new ArrayList<>();
    GroupSignals signals = new GroupSignals(tasks::add);
    signals.started(leader);
    assertTrue(signals.goneAfterExit(), "the group is empty");
    assertEquals(List.of(), tasks, "nothing ran on the executor");
    assertFalse(signals.killedByRuntime());
    assertEquals(code(137), signals.decode(137), "no SIGKILL counts as sent to the harness");
  }

  @Test
  void aChildLeftInTheGroupByAnExitedLeaderIsNotGoneAndTheKillStillAwaitsIt() throws Exception {
    Process leader = group("sleep 60 & exit 0");
    assertTrue(leader.waitFor(30, TimeUnit.SECONDS));
    assertFalse(ProcessGroup.liveMembers(leader.pid()).isEmpty(), "the sleep stayed in the group");
    GroupSignals signals = new GroupSignals(io);
    signals.started(leader);
    assertFalse(signals.goneAfterExit(), "the sleep is still a member");
    signals.killAll(true).get(30, TimeUnit.SECONDS);
    assertEquals(List.of(), ProcessGroup.liveMembers(leader.pid()));
    assertFalse(signals.killedByRuntime());
  }
}
