package io.capsule.hub.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The hub's user docs (docs/operations.md, docs/task-api.md) stay true to the code: every test it
 * names as proof exists in the reactor, every code it names is in the catalog, and every setting it
 * gives with a default in parentheses has that default in the merged {@code reference.conf}.
 */
class HubSectionTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** The operations page and the task API page, where the hub's behaviour is documented. */
  private static String section() throws IOException {
    return Files.readString(ROOT.resolve("docs/operations.md"))
        + Files.readString(ROOT.resolve("docs/task-api.md"));
  }

  private static List<String> all(String regex, String text) {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile(regex).matcher(text);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  @Test
  void everyTestTheSectionNamesAsProofExists() throws IOException {
    TreeSet<String> named = new TreeSet<>(all("`([A-Z][A-Za-z0-9]*(?:Test|IT))`", section()));
    assertTrue(named.size() >= 10, "the pages name their tests: " + named);
    TreeSet<String> existing = new TreeSet<>();
    try (Stream<Path> files = Files.walk(ROOT)) {
      files
          .filter(p -> p.toString().contains("/src/test/java/"))
          .map(p -> p.getFileName().toString())
          .filter(f -> f.endsWith(".java"))
          .forEach(f -> existing.add(f.substring(0, f.length() - 5)));
    }
    named.removeAll(existing);
    assertEquals(new TreeSet<>(), named, "tests the docs name that do not exist");
  }

  @Test
  void everyCodeTheSectionNamesIsInTheCatalog() throws IOException {
    List<String> codes = all("`(E-[A-Z]+-\\d{3})`", section());
    assertTrue(codes.contains("E-API-007") && codes.contains("E-HUB-003"), codes.toString());
    for (String code : codes) {
      assertEquals(code, Code.valueOf(code.replace('-', '_')).id());
    }
  }

  @Test
  void everyDefaultTheSectionGivesIsTheConfiguredOne() throws IOException {
    Config config = ConfigFactory.load();
    Matcher m =
        Pattern.compile("`(capsule\\.[a-z.-]+)`\\s+\\(([0-9]+)(?:\\s*(s|minutes|days))?\\)")
            .matcher(section());
    int checked = 0;
    while (m.find()) {
      String key = m.group(1);
      long value = Long.parseLong(m.group(2));
      String unit = m.group(3);
      if (unit == null) {
        assertEquals(value, config.getLong(key), key);
      } else {
        Duration d =
            switch (unit) {
              case "s" -> Duration.ofSeconds(value);
              case "minutes" -> Duration.ofMinutes(value);
              default -> Duration.ofDays(value);
            };
        assertEquals(d, config.getDuration(key), key);
      }
      checked++;
    }
    assertTrue(checked >= 5, "the section's defaults: " + checked);
  }
}
