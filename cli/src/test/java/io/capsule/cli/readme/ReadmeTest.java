package io.capsule.cli.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README stays true and short: its first two commands, its links into docs/, the example
 * capsule it quotes; the command table and library coordinates it points to in docs/ too.
 */
class ReadmeTest {
  private static final Path README =
      Path.of("..").toAbsolutePath().normalize().resolve("README.md");
  private static final Path DOCS = README.resolveSibling("docs");

  /** The issue's bar for a README that leads: about two hundred lines. */
  private static final int MAX_LINES = 210;

  @Test
  void staysShortAndNamesNoTestsIssuesOrDates() throws IOException {
    String readme = Files.readString(README);
    assertTrue(readme.lines().count() <= MAX_LINES, "README lines: " + readme.lines().count());
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "[A-Z][A-Za-z0-9]+(?:Test|IT)\\b|issue #?\\d+|#\\d{1,3}\\b|\\b20\\d\\d-\\d\\d-\\d\\d\\b")
            .matcher(readme);
    List<String> found = new java.util.ArrayList<>();
    while (m.find()) {
      found.add(m.group());
    }
    assertEquals(List.of(), found, "internals belong in docs/");
  }

  @Test
  void quotesTheClockExampleCapsuleAsItIs() throws IOException {
    String readme = Files.readString(README);
    Path clock = README.resolveSibling("examples/clock");
    String manifest = Files.readString(clock.resolve("murmur.yaml"));
    String body = manifest.substring(manifest.indexOf('\n') + 1); // its first line is a comment
    assertTrue(
        readme.contains("```yaml\n" + body + "```"), "README quotes examples/clock/murmur.yaml");
    String harness = Files.readString(clock.resolve("harness/agent.sh"));
    assertTrue(readme.contains("```sh\n" + harness + "```"), "README quotes harness/agent.sh");
    assertTrue(Files.isExecutable(clock.resolve("harness/agent.sh")));
  }

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
            "writing-a-driver.md",
            "cli.md",
            "jsonl.md",
            "tool-bridge.md",
            "task-api.md",
            "operations.md",
            "containment.md",
            "embedding.md")) {
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
    String readme = Files.readString(DOCS.resolve("embedding.md"));
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
    assertEquals(2, found, "docs/embedding.md's dependency snippets");
  }

  @Test
  void everyDocumentedCommandExists() throws IOException {
    String readme = Files.readString(DOCS.resolve("cli.md"));
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
