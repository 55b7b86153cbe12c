package io.capsule.cli;

import io.capsule.config.diag.Code;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;

/**
 * The "what to do" line under a line a person reads: for each {@code E-} code a line names, the
 * catalog's hint, the way {@code capsule doctor} prints it under a diagnostic
 * (docs/error-codes.md). Used by {@code capsule run}'s live view and by the step lines of {@code
 * capsule runner} and {@code capsule hub}. Pure.
 */
final class Hints {
  private Hints() {}

  /** {@code " hint: …"} for each distinct catalogued {@code E-} code in {@code line}, in order. */
  static List<String> under(String line) {
    Set<String> ids = new LinkedHashSet<>();
    Matcher m = Code.idPattern().matcher(line);
    while (m.find()) {
      if (m.group().startsWith("E-")) {
        ids.add(m.group());
      }
    }
    List<String> out = new ArrayList<>();
    for (String id : ids) {
      Code.byId(id).ifPresent(code -> out.add("  hint: " + code.hint()));
    }
    return out;
  }

  /** {@code line}, then its hints, as one block of lines. */
  static String withHints(String line) {
    StringBuilder out = new StringBuilder(line);
    for (String hint : under(line)) {
      out.append(System.lineSeparator()).append(hint);
    }
    return out.toString();
  }
}
