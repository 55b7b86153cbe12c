package io.capsule.runtime.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which finished run directories {@code capsule.run.keep} removes. */
class RunRetentionTest {

  private static final Instant NOW = Instant.parse("2026-12-02T00:00:00Z");
  private static final Path OWN = Path.of("/w/own");

  /**
   * Runs named by their age in hours (the own run is {@code own}); the ones removed, in order from
   * the newest.
   */
  @ParameterizedTest(name = "keep {0} within {1} h: {2} -> {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          3   | 100 | 1 2 3             | -
          2   | 100 | 1 2 3 4           | 3 4
          0   | 100 | 1 2               | 1 2
          100 | 10  | 1 9 11 50         | 11 50
          2   | 10  | 1 5 20            | 20
          1   | 100 | own 1 2           | 2
          0   | 0   | own               | -
          """)
  void keepsTheNewestWithinTheAge(int count, int hours, String ages, String removed) {
    List<RunRetention.Finished> runs = new ArrayList<>();
    for (String a : ages.trim().split(" ")) {
      if (a.equals("own")) {
        runs.add(new RunRetention.Finished(OWN, NOW));
      } else {
        runs.add(
            new RunRetention.Finished(
                Path.of("/w/" + a), NOW.minus(Duration.ofHours(Long.parseLong(a)))));
      }
    }
    List<Path> expected =
        removed.trim().equals("-")
            ? List.of()
            : Arrays.stream(removed.trim().split(" ")).map(a -> Path.of("/w/" + a)).toList();

    assertEquals(
        expected,
        RunRetention.select(runs, OWN, new RunRetention.Keep(count, Duration.ofHours(hours)), NOW));
  }

  @ParameterizedTest
  @CsvSource({
    "task-1-1764633600000-a3f9, 1764633600000",
    "t_x.y-1764633600000-0, 1764633600000",
    "-1764633600000-ff, 1764633600000",
  })
  void readsTheStartFromARunDirectorysName(String name, long millis) {
    assertEquals(Optional.of(Instant.ofEpochMilli(millis)), RunRetention.startedOf(name));
  }

  @ParameterizedTest
  @CsvSource({"notes", "task-1-12-ab", "task-1-1764633600000-XYZ", "a/../b-1764633600000-ab"})
  void anythingElseIsNotARunDirectory(String name) {
    assertEquals(Optional.empty(), RunRetention.startedOf(name));
  }

  @Test
  void prunesOnlyFinishedRunsAndNeverTheOwnOrAStranger(@TempDir Path root) throws Exception {
    Path oldDone = run(root, "a-" + NOW.minus(Duration.ofDays(9)).toEpochMilli() + "-1", true);
    Path oldGoing = run(root, "b-" + NOW.minus(Duration.ofDays(9)).toEpochMilli() + "-2", false);
    Path freshDone = run(root, "c-" + NOW.minus(Duration.ofHours(1)).toEpochMilli() + "-3", true);
    Path own = run(root, "d-" + NOW.minus(Duration.ofDays(30)).toEpochMilli() + "-4", true);
    Path stranger = Files.createDirectories(root.resolve("my-notes"));
    Files.createDirectories(oldDone.resolve("files/sub"));
    Files.writeString(oldDone.resolve("files/sub/x"), "x");

    int removed =
        RunRetention.prune(root, own, new RunRetention.Keep(100, Duration.ofDays(7)), NOW);

    assertEquals(1, removed);
    assertFalse(Files.exists(oldDone), "finished and past the age");
    assertTrue(Files.exists(oldGoing), "a run still going is never touched");
    assertTrue(Files.exists(freshDone));
    assertTrue(Files.exists(own), "the cleaning run keeps its own directory");
    assertTrue(Files.exists(stranger), "not a run directory by its name");
  }

  @Test
  void aWorkRootThatDoesNotExistIsNothingToClean(@TempDir Path root) {
    assertEquals(
        0,
        RunRetention.prune(
            root.resolve("absent"), OWN, new RunRetention.Keep(0, Duration.ZERO), NOW));
  }

  private static Path run(Path root, String name, boolean ended) throws Exception {
    Path dir = Files.createDirectories(root.resolve(name));
    String trace =
        "{\"event_type\":\"run_start\",\"timestamp\":\"x\"}\n"
            + (ended
                ? "{\"event_type\":\"run_end\",\"timestamp\":\"x\",\"outcome\":\"done\"}\n"
                : "");
    Files.writeString(dir.resolve("trace.jsonl"), trace);
    return dir;
  }
}
