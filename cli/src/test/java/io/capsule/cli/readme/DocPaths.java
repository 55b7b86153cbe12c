package io.capsule.cli.readme;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the user documentation ({@code README.md} and every page under {@code docs/}) points at, and
 * whether it is there: its relative links and its backticked paths. Pure (file reads only); used on
 * the source tree by {@link DocsCoverageTest} and on the unpacked release archive by {@code
 * ReleaseArchiveIT}.
 *
 * <p>The rule the pages follow (docs/README.md): a path whose first folder is a module of the
 * source repository ({@code config/}, {@code drivers/}, …) must be in the source tree; every other
 * path whose first folder is one the release archive has at its top ({@code bin/}, {@code conf/},
 * {@code docs/}, {@code examples/}, …) must be in the archive. Paths relative to something else (a
 * capsule's {@code harness/x.sh}, a media type such as {@code text/event-stream}) name no top
 * folder and are not checked. Fenced code blocks are examples, not references, and are skipped.
 */
public final class DocPaths {
  private static final Pattern FENCE = Pattern.compile("(?ms)^```.*?^```");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]*)(#[^)]*)?\\)");
  private static final Pattern TICKED = Pattern.compile("`([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]*)`");

  private DocPaths() {}

  /** {@code README.md} and every Markdown page under {@code docs/} of {@code tree}. */
  public static List<Path> pages(Path tree) throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(tree.resolve("README.md"));
    try (Stream<Path> files = Files.walk(tree.resolve("docs"))) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }

  /** The modules of the reactor, read from the source tree's root {@code pom.xml}. */
  public static Set<String> sourceModules(Path sourceRoot) throws IOException {
    Set<String> modules = new TreeSet<>();
    Matcher m =
        Pattern.compile("<module>([^<]+)</module>")
            .matcher(Files.readString(sourceRoot.resolve("pom.xml")));
    while (m.find()) {
      modules.add(m.group(1));
    }
    return modules;
  }

  /**
   * Every link or path of the pages of {@code tree} that does not resolve in it. When {@code tree}
   * holds the {@code modules} (the source tree) the paths under them are checked, else (a release)
   * the others; build outputs ({@code …/target/…}) are never checked.
   */
  public static List<String> unresolved(Path tree, Set<String> modules) throws IOException {
    boolean source = modules.stream().allMatch(m -> Files.isDirectory(tree.resolve(m)));
    Set<String> tops = new TreeSet<>();
    try (Stream<Path> top = Files.list(tree)) {
      top.forEach(p -> tops.add(p.getFileName().toString()));
    }
    List<String> problems = new ArrayList<>();
    for (Path page : pages(tree)) {
      String text = FENCE.matcher(Files.readString(page)).replaceAll("");
      String name = tree.relativize(page).toString();
      Matcher link = LINK.matcher(text);
      while (link.find()) {
        String target = link.group(1);
        if (target.isEmpty() || target.contains(":")) {
          continue;
        }
        Path resolved = page.getParent().resolve(target).normalize();
        if (!resolved.startsWith(tree) || !Files.exists(resolved)) {
          problems.add(name + " links to missing " + target);
        }
      }
      Matcher ticked = TICKED.matcher(text);
      while (ticked.find()) {
        String path = ticked.group(1);
        String first = path.substring(0, path.indexOf('/'));
        boolean module = modules.contains(first);
        // A source tree is checked for the source paths, a release for the release's own.
        if (path.contains("/target/") || module != source || !tops.contains(first)) {
          continue;
        }
        if (!Files.exists(tree.resolve(path))) {
          problems.add(name + " names missing `" + path + "`");
        }
      }
    }
    return problems;
  }
}
