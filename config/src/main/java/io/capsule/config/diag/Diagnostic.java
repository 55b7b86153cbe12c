package io.capsule.config.diag;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One thing a person must know: its {@link Code}, one line of what happened, one line of what to
 * do, and structured details (file, key path, line, column, function, …) in insertion order. Every
 * module raises diagnostics through this value and renders them the same way.
 *
 * @param code the catalog entry
 * @param message what happened, one line, specific to this occurrence
 * @param hint what to do, one line; defaults to the catalog hint
 * @param details ordered key/value facts; never secrets
 */
public record Diagnostic(Code code, String message, String hint, Map<String, String> details) {

  public Diagnostic {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(message, "message");
    hint = hint == null || hint.isBlank() ? code.hint() : hint;
    details =
        Collections.unmodifiableMap(new LinkedHashMap<>(details == null ? Map.of() : details));
  }

  public static Diagnostic of(Code code, String message) {
    return new Diagnostic(code, message, null, Map.of());
  }

  public static Diagnostic of(Code code, String message, Map<String, String> details) {
    return new Diagnostic(code, message, null, details);
  }

  /** A copy with one more detail (kept last). */
  public Diagnostic with(String key, Object value) {
    Map<String, String> more = new LinkedHashMap<>(details);
    more.put(key, String.valueOf(value));
    return new Diagnostic(code, message, hint, more);
  }

  /** A copy with another hint. */
  public Diagnostic withHint(String newHint) {
    return new Diagnostic(code, message, newHint, details);
  }

  public Severity severity() {
    return code.severity();
  }

  public boolean isError() {
    return code.severity() == Severity.ERROR;
  }

  /**
   * The one rendering everyone uses: {@code E-RUN-034 driver failed in parse: … [file=…, line=3]}
   * on the first line, {@code hint: …} on the second.
   */
  public String render() {
    StringBuilder out = new StringBuilder(code.id()).append(' ').append(message);
    if (!details.isEmpty()) {
      out.append(" [");
      boolean first = true;
      for (Map.Entry<String, String> e : details.entrySet()) {
        if (!first) {
          out.append(", ");
        }
        out.append(e.getKey()).append('=').append(e.getValue());
        first = false;
      }
      out.append(']');
    }
    return out.append(System.lineSeparator()).append("  hint: ").append(hint).toString();
  }

  @Override
  public String toString() {
    return code.id() + " " + message;
  }
}
