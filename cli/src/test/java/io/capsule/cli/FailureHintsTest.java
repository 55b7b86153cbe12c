package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every failure {@code capsule run} shows says what to do (docs/cli.md): the catalog's hint under
 * each {@code E-} line, and a harness printing lines its driver cannot read gets a few of them
 * shown, once, with where to find every one.
 */
class FailureHintsTest {
  /**
   * The code families a {@code capsule run} can print: its command line, settings, manifest,
   * grants, the run itself, and the tool bridge it opens.
   */
  private static final Set<String> REACHABLE_FROM_RUN =
      Set.of("CLI", "CFG", "MAN", "CAP", "RUN", "TOOL");

  @TempDir Path tmp;

  @Test
  void everyCodeARunCanEndWithHasAHintThatIsPrintedUnderIt() {
    List<String> missing = new ArrayList<>();
    int walked = 0;
    for (Code code : Code.values()) {
      String family = code.id().split("-")[1];
      if (!code.id().startsWith("E-") || !REACHABLE_FROM_RUN.contains(family)) {
        continue;
      }
      walked++;
      String hint = code.hint() == null ? "" : code.hint().strip();
      if (hint.isEmpty() || hint.equalsIgnoreCase(code.meaning().strip())) {
        missing.add(code.id());
      } else {
        assertEquals(List.of("  hint: " + code.hint()), Hints.under("✗ failed · " + code.id()));
      }
    }
    assertTrue(walked >= 30, "the catalog walked: " + walked);
    assertEquals(List.of(), missing, "codes a run can print without saying what to do");
  }

  @Test
  void aFailedRunPrintsTheHintUnderItsCode() throws IOException {
    Path capsule =
        FirstHourCapsules.capsule(
            tmp,
            "t",
            "allow: [PATH]",
            "[ \"$1\" = --version ] && { echo 1; exit 0; }\nread -r line\nexit 3");
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(1, r.exit(), r.out() + r.err());
    List<String> lines = r.out().lines().toList();
    int failed = indexOf(lines, "✗ failed");
    assertTrue(failed >= 0, r.out());
    String code = lines.get(failed).replaceAll(".*· ", "").replaceAll(":.*", "");
    assertTrue(
        lines.subList(failed, lines.size()).stream()
            .anyMatch(l -> l.equals("  hint: " + Code.byId(code).orElseThrow().hint())),
        r.out());
  }

  @Test
  void unreadableHarnessLinesAreShownOnceBoundedWithAPointerToTheTrace() throws IOException {
    StringBuilder harness = new StringBuilder("[ \"$1\" = --version ] && { echo 1; exit 0; }\n");
    harness.append("read -r line\n");
    for (int i = 0; i < 7; i++) {
      harness.append("echo 'garbage line ").append(i).append("'\n");
    }
    harness.append("echo '{\"type\":\"result\",\"text\":\"hi\"}'");
    Path capsule = FirstHourCapsules.capsule(tmp, "t", "allow: [PATH]", harness.toString());
    Cli.Result r = Cli.run("run", capsule.toString(), "--task", "x");
    assertEquals(0, r.exit(), r.out() + r.err());
    assertEquals(
        LiveRenderer.UNREADABLE_SHOWN,
        FirstHourCapsules.count(r.out(), "cannot read: garbage line"),
        r.out());
    assertTrue(r.out().contains("cannot read: garbage line 0"), r.out());
    assertFalse(r.out().contains("garbage line 3"), r.out());
    assertEquals(1, FirstHourCapsules.count(r.out(), "--trace-dir"), r.out());
    assertTrue(r.out().contains("7 harness lines could not be read in all"), r.out());
  }

  private static int indexOf(List<String> lines, String prefix) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith(prefix)) {
        return i;
      }
    }
    return -1;
  }
}
