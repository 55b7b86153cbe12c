package io.capsule.config.diag;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds the diagnostic codes the reactor's main sources use: {@code Code.E_RUN_034} (or a bare
 * {@code E_RUN_034} after a static import) in code, and code ids like {@code "E-RUN-033:quota"}
 * inside string literals. Comments do not count: mentioning a code is not raising it.
 */
final class JavaSourceScan {

  private static final Pattern CONSTANT = Pattern.compile("\\b([EW]_[A-Z]{3,4}_\\d{3})\\b");
  private static final Pattern MODULE = Pattern.compile("<module>\\s*([^<\\s]+)\\s*</module>");

  /** Code id → the files (relative to the reactor root) that use it. */
  final Map<String, Set<String>> uses = new TreeMap<>();

  private JavaSourceScan() {}

  /** Scans {@code src/main} of every module of the reactor that holds the working directory. */
  static JavaSourceScan ofReactor(Set<Path> excluded) throws IOException {
    Path root = reactorRoot();
    JavaSourceScan scan = new JavaSourceScan();
    String pom = Files.readString(root.resolve("pom.xml"));
    Matcher modules = MODULE.matcher(pom);
    while (modules.find()) {
      Path main = root.resolve(modules.group(1)).resolve("src/main");
      if (!Files.isDirectory(main)) {
        continue;
      }
      try (Stream<Path> files = Files.walk(main)) {
        files
            .filter(f -> f.toString().endsWith(".java"))
            .filter(f -> excluded.stream().noneMatch(f::endsWith))
            .forEach(f -> scan.scan(root.relativize(f).toString(), read(f)));
      }
    }
    return scan;
  }

  /** Scans one source text as if it were {@code T.java} (for tests of the scanner). */
  static JavaSourceScan ofText(String source) {
    JavaSourceScan scan = new JavaSourceScan();
    scan.scan("T.java", source);
    return scan;
  }

  /** The nearest directory above the working directory whose pom.xml lists modules. */
  static Path reactorRoot() throws IOException {
    for (Path at = Path.of("").toAbsolutePath(); at != null; at = at.getParent()) {
      Path pom = at.resolve("pom.xml");
      if (Files.isRegularFile(pom) && Files.readString(pom).contains("<modules>")) {
        return at;
      }
    }
    throw new IllegalStateException("no reactor pom.xml above " + Path.of("").toAbsolutePath());
  }

  void scan(String file, String source) {
    List<String> literals = new ArrayList<>();
    String code = stripCommentsAndLiterals(source, literals);
    Matcher constants = CONSTANT.matcher(code);
    while (constants.find()) {
      use(constants.group(1).replace('_', '-'), file);
    }
    for (String literal : literals) {
      Matcher ids = Code.idPattern().matcher(literal);
      while (ids.find()) {
        use(ids.group(), file);
      }
    }
  }

  private void use(String id, String file) {
    uses.computeIfAbsent(id, k -> new TreeSet<>()).add(file);
  }

  /**
   * Java text with comments removed and each string, text block or char literal replaced by an
   * empty one; the literals' contents go to {@code literals}. Enough of a lexer for this purpose:
   * it knows escapes, text blocks and that a quote inside a comment is not a string.
   */
  static String stripCommentsAndLiterals(String src, List<String> literals) {
    StringBuilder code = new StringBuilder(src.length());
    int i = 0;
    int n = src.length();
    while (i < n) {
      char c = src.charAt(i);
      if (src.startsWith("//", i)) {
        int end = src.indexOf('\n', i);
        i = end < 0 ? n : end;
      } else if (src.startsWith("/*", i)) {
        int end = src.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
        code.append(' ');
      } else if (src.startsWith("\"\"\"", i)) {
        int end = closing(src, i + 3, "\"\"\"");
        literals.add(src.substring(i + 3, end));
        code.append("\"\"");
        i = Math.min(n, end + 3);
      } else if (c == '"' || c == '\'') {
        int end = closing(src, i + 1, String.valueOf(c));
        if (c == '"') {
          literals.add(src.substring(i + 1, end));
        }
        code.append(c).append(c);
        i = Math.min(n, end + 1);
      } else {
        code.append(c);
        i++;
      }
    }
    return code.toString();
  }

  /** Index of the unescaped {@code close} at or after {@code from}, or the text's end. */
  private static int closing(String src, int from, String close) {
    int j = from;
    while (j < src.length()) {
      if (src.charAt(j) == '\\') {
        j += 2;
      } else if (src.startsWith(close, j)) {
        return j;
      } else {
        j++;
      }
    }
    return src.length();
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
