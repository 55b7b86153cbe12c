package io.capsule.cli.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README stays true: its first two commands, its code table, its command table. */
class ReadmeTest {
  private static final Path README =
      Path.of("..").toAbsolutePath().normalize().resolve("README.md");

  @Test
  void startsWithTheRunCommandAndTheTestCommand() throws IOException {
    List<String> lines = Files.readAllLines(README);
    int fence = lines.indexOf("```");
    assertEquals("bin/capsule run examples/hello --task \"Say hello\"", lines.get(fence + 1));
    assertEquals("./mvnw -B -ntp verify", lines.get(fence + 2));
    assertEquals("```", lines.get(fence + 3));
  }

  @Test
  void theErrorCodeTableListsEveryCodeOfTheCatalog() throws IOException {
    String readme = Files.readString(README);
    List<String> missing = new ArrayList<>();
    for (Code code : Code.values()) {
      String id = code.id();
      boolean listed =
          readme.contains("`" + id + "`")
              || (id.startsWith("E-TOOL-") && readme.contains("`E-TOOL-*`"));
      if (!listed) {
        missing.add(id);
      }
    }
    assertTrue(missing.isEmpty(), "codes missing from the README: " + missing);
  }

  @Test
  void everyDocumentedCommandExists() throws IOException {
    String readme = Files.readString(README);
    for (String command :
        List.of(
            "run", "doctor", "driver describe", "driver replay", "hub", "hub token", "runner")) {
      assertTrue(readme.contains("`capsule " + command), command);
      String[] words = command.split(" ");
      int exit = io.capsule.cli.CapsuleMain.execute(append(words, "--help"));
      assertEquals(0, exit, "capsule " + command + " --help");
    }
  }

  private static String[] append(String[] words, String last) {
    String[] out = java.util.Arrays.copyOf(words, words.length + 1);
    out[words.length] = last;
    return out;
  }
}
