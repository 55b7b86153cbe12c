package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** Killing a harness's process group: nothing of it is alive when {@code killAll} returns. */
class ProcessGroupTest {

  /** A new group: a leader with three busy children, started only once all of them run. */
  private static Process busyGroup() throws Exception {
    Process leader =
        new ProcessBuilder(
                ProcessGroup.SETSID.toString(),
                "/bin/sh",
                "-c",
                "for i in 1 2 3; do (while :; do :; done) & done; echo up; wait")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(leader.getInputStream(), StandardCharsets.UTF_8))) {
      assertEquals("up", out.readLine());
    }
    return leader;
  }

  // Busy loops on two cores are exactly when a member is still running as kill(2) returns.
  @RepeatedTest(5)
  void noMemberIsAliveWhenKillAllReturns() throws Exception {
    Process leader = busyGroup();
    long pgid = leader.pid();
    assertEquals(4, ProcessGroup.liveMembers(pgid).size(), "leader and three children");
    ProcessGroup.killAll(pgid, leader.toHandle());
    assertEquals(List.of(), ProcessGroup.liveMembers(pgid));
    // Dead is the kernel's word: the leader may still be a zombie here until the JDK's reaper
    // thread collects it, so Process.isAlive() could be true for a moment (a flake once).
    assertTrue(leader.waitFor(10, TimeUnit.SECONDS), "the leader's exit reaches the JDK");
    assertEquals(128 + 9, leader.exitValue(), "killed by SIGKILL");
  }

  @Test
  void anExitedLeaderThatLeftNothingIsDoneWithoutAKillOrAWait() throws Exception {
    Process leader =
        new ProcessBuilder(ProcessGroup.SETSID.toString(), "/bin/sh", "-c", "exit 3")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    assertEquals(3, leader.waitFor());
    assertFalse(ProcessGroup.killAll(leader.pid(), leader.toHandle()), "nothing left to kill");
    assertEquals(List.of(), ProcessGroup.liveMembers(leader.pid()));
  }

  @Test
  void aChildLeftInTheGroupByAnExitedLeaderIsStillKilled() throws Exception {
    Process leader =
        new ProcessBuilder(
                ProcessGroup.SETSID.toString(), "/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 &")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    assertEquals(0, leader.waitFor());
    assertEquals(1, ProcessGroup.liveMembers(leader.pid()).size(), "the orphaned sleep");
    assertTrue(ProcessGroup.killAll(leader.pid(), leader.toHandle()), "the orphan was killed");
    assertEquals(List.of(), ProcessGroup.liveMembers(leader.pid()));
  }

  @Test
  void awaitingAGroupThatIsGoneReturnsAtOnce() throws Exception {
    Process leader = busyGroup();
    ProcessGroup.killAll(leader.pid(), leader.toHandle());
    assertTrue(ProcessGroup.awaitGone(leader.pid(), Duration.ZERO));
  }

  @Test
  void awaitingALiveGroupGivesUpAfterItsBound() throws Exception {
    Process leader = busyGroup();
    try {
      assertFalse(ProcessGroup.awaitGone(leader.pid(), Duration.ofMillis(20)));
    } finally {
      ProcessGroup.killAll(leader.pid(), leader.toHandle());
    }
  }

  @Test
  void theGroupOfInitOrOfNoOneIsNeverSignalled() {
    assertThrows(IllegalArgumentException.class, () -> ProcessGroup.signal(1, "KILL"));
    assertThrows(IllegalArgumentException.class, () -> ProcessGroup.signal(0, "KILL"));
  }

  @Test
  void aThousandInterruptsSpawnNoHelperProcess() throws Exception {
    Process leader =
        new ProcessBuilder(
                ProcessGroup.SETSID.toString(), "/bin/sh", "-c", "trap '' INT; echo up; sleep 60")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(leader.getInputStream(), StandardCharsets.UTF_8))) {
      assertEquals("up", out.readLine());
      // A watcher lists this JVM's children the whole time: a helper kill(1) per signal (as
      // before, each alive for a millisecond or so) would be seen; the leader is the only child.
      Set<Long> others = ConcurrentHashMap.newKeySet();
      AtomicBoolean signalling = new AtomicBoolean(true);
      Thread watcher =
          new Thread(
              () -> {
                while (signalling.get()) {
                  ProcessHandle.current()
                      .children()
                      .filter(p -> p.pid() != leader.pid())
                      .forEach(p -> others.add(p.pid()));
                }
              });
      watcher.start();
      for (int i = 0; i < 1_000; i++) {
        assertTrue(ProcessGroup.signal(leader.pid(), "INT"), "the group is there to signal");
      }
      signalling.set(false);
      watcher.join(10_000);
      assertEquals(0, others.size(), "processes started to deliver the signals");
      assertTrue(leader.isAlive(), "it ignores SIGINT");
    } finally {
      ProcessGroup.killAll(leader.pid(), leader.toHandle());
    }
    assertEquals(List.of(), ProcessGroup.liveMembers(leader.pid()));
  }
}
