package io.capsule.cli.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README stays true: its first two commands, its links into docs/, its command table. */
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
  void linksEveryReferencePageUnderDocs() throws IOException {
    String readme = Files.readString(README);
    for (String page :
        List.of(
            "architecture.md",
            "run-semantics.md",
            "manifest.md",
            "settings.md",
            "error-codes.md",
            "runner-protocol.md",
            "driver-contract.md",
            "writing-a-driver.md")) {
      assertTrue(readme.contains("(docs/" + page + ")"), page);
    }
  }

  @Test
  void saysHowSettingsReachTheCommandAndBinCapsuleDoesThat() throws IOException {
    String readme = Files.readString(README);
    assertTrue(readme.contains("CAPSULE_JAVA_OPTS=-Dcapsule."), "README shows CAPSULE_JAVA_OPTS");
    assertTrue(
        Files.readString(README.resolveSibling("docs/settings.md")).contains("CAPSULE_JAVA_OPTS"));
    assertTrue(
        Files.readString(README.resolveSibling("bin/capsule")).contains("${CAPSULE_JAVA_OPTS:-}"),
        "bin/capsule passes CAPSULE_JAVA_OPTS to java");
  }

  @Test
  void saysHowLongTheTokenOfTheExampleLives() throws IOException {
    String ttl =
        new picocli.CommandLine(new io.capsule.cli.CapsuleMain())
            .getSubcommands()
            .get("hub")
            .getSubcommands()
            .get("token")
            .getCommandSpec()
            .findOption("--ttl")
            .defaultValue();
    assertEquals("10m", ttl, "the README says 10 minutes");
    String tokenLine =
        Files.readAllLines(README).stream()
            .filter(l -> l.startsWith("TOKEN=$("))
            .findFirst()
            .orElseThrow();
    assertTrue(tokenLine.contains("valid 10 minutes (--ttl)"), tokenLine);
  }

  @Test
  void theLibraryCoordinatesAreTheBuildsOwn() throws IOException {
    String readme = Files.readString(README);
    String version = System.getProperty("test.capsule-version");
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "<artifactId>(capsule-[a-z-]+)</artifactId>[^\\n]*\\n\\s*<version>([^<]+)</version>")
            .matcher(readme);
    int found = 0;
    while (m.find()) {
      found++;
      String artifact = m.group(1);
      String module = artifact.substring("capsule-".length());
      Path pom = README.resolveSibling(module).resolve("pom.xml");
      assertTrue(
          Files.readString(pom).contains("<artifactId>" + artifact + "</artifactId>"),
          artifact + " is the artifact of " + pom);
      assertEquals(version, m.group(2), artifact + "'s version in the README");
    }
    assertEquals(2, found, "the README's dependency snippets");
  }

  @Test
  void everyDocumentedCommandExists() throws IOException {
    String readme = Files.readString(README);
    for (String command :
        List.of(
            "run",
            "doctor",
            "driver describe",
            "driver replay",
            "hub",
            "hub token",
            "runner",
            "help")) {
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
