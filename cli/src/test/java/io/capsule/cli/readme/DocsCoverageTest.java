package io.capsule.cli.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.ManifestInvalid;
import io.capsule.config.manifest.ManifestLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The reference pages under {@code docs/} name exactly what the code has: every manifest key the
 * validator accepts, every {@code capsule.*} setting of the merged {@code reference.conf}, every
 * catalog code; and nothing the code lacks. A key, setting or code added without its line in the
 * docs (or documented after it was removed) fails here.
 */
class DocsCoverageTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path DOCS = ROOT.resolve("docs");

  /** A reference-table row: its first cell is one key in backticks. */
  private static final Pattern ROW_KEY = Pattern.compile("(?m)^\\| `([^`]+)` \\|");

  private static final Pattern SETTING = Pattern.compile("`(capsule\\.[a-z0-9.-]+)`");
  private static final Pattern UNKNOWN_KEY =
      Pattern.compile(
          "unknown key 'zz_probe'(?: in (\\S+)| at the top level); expected one of \\[(.*)]");

  @Test
  void theManifestReferenceListsExactlyTheKeysTheValidatorAccepts() throws IOException {
    Set<String> documented = rowKeys(DOCS.resolve("manifest.md"));
    assertEquals(acceptedManifestKeys(), documented);
  }

  @Test
  void theSettingsPageListsEveryCapsuleSettingAndNoOther() throws IOException {
    Config capsule = ConfigFactory.defaultReference().getConfig("capsule");
    Set<String> leaves = new TreeSet<>();
    Set<String> dispatchers = new TreeSet<>();
    for (Map.Entry<String, ConfigValue> e : capsule.entrySet()) {
      String first = e.getKey().split("\\.")[0];
      // Pekko dispatcher blocks are documented by name, not leaf by leaf: their keys are Pekko's.
      if (first.endsWith("-dispatcher")) {
        dispatchers.add("capsule." + first);
      } else {
        leaves.add("capsule." + e.getKey());
      }
    }
    String page = Files.readString(DOCS.resolve("settings.md"));
    Set<String> tableRows = new TreeSet<>(rowKeys(DOCS.resolve("settings.md")));
    tableRows.removeIf(k -> !k.startsWith("capsule."));
    assertEquals(leaves, tableRows, "settings table rows vs reference.conf");

    Set<String> named = new TreeSet<>();
    Matcher m = SETTING.matcher(page);
    while (m.find()) {
      named.add(m.group(1));
    }
    Set<String> unknown = new TreeSet<>(named);
    unknown.removeAll(leaves);
    unknown.removeAll(dispatchers);
    // A section heading names a group of settings (`capsule.run`): fine when the group exists.
    unknown.removeIf(name -> leaves.stream().anyMatch(leaf -> leaf.startsWith(name + ".")));
    assertTrue(unknown.isEmpty(), "settings.md names settings reference.conf lacks: " + unknown);
    Set<String> undocumented = new TreeSet<>(dispatchers);
    undocumented.removeAll(named);
    assertTrue(undocumented.isEmpty(), "dispatchers missing from settings.md: " + undocumented);
  }

  @Test
  void theErrorCodePageListsExactlyTheCatalog() throws IOException {
    Set<String> catalog = new TreeSet<>();
    for (Code code : Code.values()) {
      catalog.add(code.id());
    }
    assertEquals(catalog, rowKeys(DOCS.resolve("error-codes.md")));
  }

  @Test
  void noPageOrReadmeNamesACodeTheCatalogLacks() throws IOException {
    List<String> unknown = new ArrayList<>();
    for (Path page : pages()) {
      Matcher m = Code.idPattern().matcher(Files.readString(page));
      while (m.find()) {
        if (Code.byId(m.group()).isEmpty()) {
          unknown.add(ROOT.relativize(page) + ": " + m.group());
        }
      }
    }
    assertTrue(unknown.isEmpty(), "codes not in the catalog: " + unknown);
  }

  @Test
  void theDocsStandAloneAndTheirRelativeLinksResolve() throws IOException {
    Pattern link = Pattern.compile("\\]\\(([^)#:]+)(#[^)]*)?\\)");
    List<String> problems = new ArrayList<>();
    List<Path> readmes =
        sources().stream().filter(p -> p.getFileName().toString().equals("README.md")).toList();
    for (Path page : Stream.concat(pages().stream(), readmes.stream()).distinct().toList()) {
      String text = Files.readString(page);
      if (text.contains("../shared") || text.contains("/work/shared")) {
        problems.add(ROOT.relativize(page) + " points outside the repository");
      }
      Matcher m = link.matcher(text);
      while (m.find()) {
        if (!Files.exists(page.getParent().resolve(m.group(1)))) {
          problems.add(ROOT.relativize(page) + " links to missing " + m.group(1));
        }
      }
    }
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void everySourcePathTheUserDocsNameIsInTheSourceTree() throws IOException {
    List<String> problems = DocPaths.unresolved(ROOT, DocPaths.sourceModules(ROOT));
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void everyDocsPathAndSectionTheSourcesCiteExists() throws IOException {
    Pattern cite = Pattern.compile("docs/([a-z0-9/-]+\\.(?:md|wit))(?:`?\\)?,? §(\\d+))?");
    String semantics = Files.readString(DOCS.resolve("run-semantics.md"));
    List<String> broken = new ArrayList<>();
    int citations = 0;
    for (Path file : sources()) {
      Matcher m = cite.matcher(Files.readString(file));
      while (m.find()) {
        citations++;
        if (!Files.isRegularFile(DOCS.resolve(m.group(1)))) {
          broken.add(ROOT.relativize(file) + ": docs/" + m.group(1));
        } else if (m.group(2) != null
            && m.group(1).equals("run-semantics.md")
            && !semantics.contains("\n## §" + m.group(2) + " ")) {
          broken.add(ROOT.relativize(file) + ": run-semantics §" + m.group(2));
        }
      }
    }
    assertTrue(citations > 50, "the sources cite the docs: " + citations);
    assertTrue(broken.isEmpty(), "citations of missing docs: " + broken);
  }

  @Test
  void theDriverContractInTheDocsIsTheOneTheDriversImplement() throws IOException {
    assertEquals(
        Files.readString(ROOT.resolve("drivers/wit/murmur-driver-0.6.0.wit")),
        Files.readString(DOCS.resolve("murmur-driver-0.6.0.wit")));
  }

  /**
   * Asks the validator itself: a manifest with an unknown key in every mapping it checks draws one
   * "expected one of" list per mapping, which together are every key it accepts.
   */
  private static Set<String> acceptedManifestKeys() {
    String probe =
        """
        zz_probe: 1
        name: probe
        version: 0.1.0
        artifacts:
          - {name: d, version: 0.1.0, runtime: driver, builtin: jsonl, zz_probe: 1}
        inference:
          zz_probe: 1
          driver: {artifact: d, zz_probe: 1}
        capabilities:
          zz_probe: 1
          env: {zz_probe: 1}
          network: {zz_probe: 1}
          harness: {paths: [{path: /tmp, zz_probe: 1}], zz_probe: 1}
          shell: {zz_probe: 1}
          filesystem: {zz_probe: 1}
          resources: {zz_probe: 1}
        lifecycle: {zz_probe: 1}
        """;
    List<Diagnostic> errors;
    try {
      ManifestLoader.parse(probe, ROOT, "probe.yaml");
      throw new AssertionError("the probe manifest was accepted");
    } catch (ManifestInvalid invalid) {
      errors = invalid.diagnostics();
    }
    Set<String> keys = new TreeSet<>();
    int sections = 0;
    for (Diagnostic d : errors) {
      Matcher m = UNKNOWN_KEY.matcher(d.message());
      if (!m.find()) {
        continue;
      }
      sections++;
      String at = m.group(1) == null ? "" : m.group(1).replaceAll("\\[\\d+]", "[]") + ".";
      for (String key : m.group(2).split(", ")) {
        keys.add(at + key);
      }
    }
    assertEquals(13, sections, "one unknown-key refusal per probed mapping: " + errors);
    return keys;
  }

  private static Set<String> rowKeys(Path page) throws IOException {
    Set<String> keys = new TreeSet<>();
    Matcher m = ROW_KEY.matcher(Files.readString(page));
    while (m.find()) {
      keys.add(m.group(1));
    }
    return keys;
  }

  /** Every Java, HOCON and Markdown file of the modules, where comments cite the docs. */
  private static List<Path> sources() throws IOException {
    try (Stream<Path> all = Files.walk(ROOT)) {
      return all.filter(Files::isRegularFile)
          .filter(p -> !ROOT.relativize(p).startsWith("docs"))
          .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
          .filter(p -> !p.toString().contains("/node_modules/"))
          .filter(
              p -> {
                String n = p.getFileName().toString();
                return n.endsWith(".java") || n.endsWith(".conf") || n.endsWith(".md");
              })
          .sorted()
          .toList();
    }
  }

  private static List<Path> pages() throws IOException {
    return DocPaths.pages(ROOT);
  }
}
