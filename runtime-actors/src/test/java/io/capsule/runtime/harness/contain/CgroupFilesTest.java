package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The kernel's counter files and the run cgroup's names, parsed (spec tables). */
class CgroupFilesTest {

  static final String MEMORY_EVENTS_V2 =
      "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n";
  static final String OOM_CONTROL_V1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";

  @ParameterizedTest(name = "{1} in {0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          v2 memory.events  | oom_kill          | 1
          v2 memory.events  | max               | 12
          v2 memory.events  | oom_group_kill    | 0
          v2 memory.events  | absent            | -1
          v1 oom_control    | oom_kill          | 3
          v1 oom_control    | under_oom         | 0
          pids.events       | max               | 7
          old oom_control   | oom_kill          | -1
          """)
  void flatKeyedCountersAreReadByKey(String file, String key, long value) {
    String text =
        switch (file) {
          case "v2 memory.events" -> MEMORY_EVENTS_V2;
          case "v1 oom_control" -> OOM_CONTROL_V1;
          case "pids.events" -> "max 7\n";
          default -> "oom_kill_disable 0\nunder_oom 0\n";
        };
    assertEquals(
        value < 0 ? OptionalLong.empty() : OptionalLong.of(value),
        CgroupFiles.flatKeyed(text, key));
  }

  @Test
  void procsListsOnePidPerLine() {
    assertEquals(List.of(12L, 345L), CgroupFiles.pids("12\n345\n"));
    assertEquals(List.of(), CgroupFiles.pids(""));
  }

  @Test
  void aRunCgroupsNameCarriesItsJvmAndASanitisedRunId() {
    RunCgroupName name = RunCgroupName.of(4242, 987654, 3, "task/42 ~ über" + "x".repeat(60));

    assertEquals("run-4242-987654-3-task_42____ber" + "x".repeat(26), name.dir());
    assertEquals(Optional.of(name), RunCgroupName.parse(name.dir()));
    assertEquals(Optional.empty(), RunCgroupName.parse("capsule"));
    assertEquals(Optional.empty(), RunCgroupName.parse("run-x-1-2-y"));
  }

  @ParameterizedTest(name = "owner start {0} → gone {1}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
      987654 | false
      111    | true
      -      | true
      """)
  void aNameIsStaleOnlyWhenItsJvmIsGone(Long startOfPid, boolean gone) {
    RunCgroupName name = RunCgroupName.of(4242, 987654, 3, "r");
    assertEquals(
        gone,
        name.ownerGone(startOfPid == null ? OptionalLong.empty() : OptionalLong.of(startOfPid)));
  }

  @Test
  void theStartTimeIsCountedAfterTheCommandName() {
    String stat =
        "4242 (we ird) (name) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 1 0 0 20 0 3 0 987654"
            + " 123 45 18446744073709551615";
    assertEquals(OptionalLong.of(987654), RunCgroupName.startTimeOf(stat));
    assertEquals(OptionalLong.empty(), RunCgroupName.startTimeOf("garbage"));
    assertEquals(
        RunCgroupName.startTime(ProcessHandle.current().pid()).isPresent(),
        true,
        "this JVM has a start time");
  }
}
