package io.capsule.config.settings;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Typed, checked reads of {@code capsule.*}. Each read reports what is wrong as E-CFG-001 naming
 * the full key, and returns a harmless placeholder so reading goes on; {@link #finish()} then
 * throws every problem at once.
 */
final class SettingsReader {

  private final Config config;
  private final List<Diagnostic> problems = new ArrayList<>();

  SettingsReader(Config config) {
    this.config = config;
  }

  /** A duration that must be greater than zero (a deadline or interval of zero means nothing). */
  Duration positive(String key) {
    Duration d = read(key, config::getDuration, Duration.ofSeconds(1));
    if (d.isNegative() || d.isZero()) {
      problem(key, "must be a positive duration, got " + show(d));
    }
    return d;
  }

  /** A duration that may be zero (a grace period of zero means "at once"), never negative. */
  Duration nonNegative(String key) {
    Duration d = read(key, config::getDuration, Duration.ZERO);
    if (d.isNegative()) {
      problem(key, "must not be negative, got " + show(d));
    }
    return d;
  }

  /** A byte size within {@code min..max} (HOCON sizes: 4096, 8MiB, 1 GiB). */
  long bytes(String key, long min, long max) {
    long n = read(key, k -> config.getBytes(k).longValue(), min);
    if (n < min || n > max) {
      problem(key, "must be between " + min + " and " + max + " bytes, got " + n);
    }
    return n;
  }

  /** A count within {@code min..max}. */
  int count(String key, int min, int max) {
    int n = read(key, config::getInt, min);
    if (n < min || n > max) {
      problem(key, "must be between " + min + " and " + max + ", got " + n);
    }
    return n;
  }

  /** A fraction in {@code 0..1}. */
  double fraction(String key) {
    double x = read(key, config::getDouble, 0.0);
    if (!(x >= 0.0 && x <= 1.0)) {
      problem(key, "must be between 0 and 1, got " + x);
    }
    return x;
  }

  /** A CPU share in cores: 0 (meaning every core of the host) or 0.01 to 1024. */
  double cores(String key) {
    double x = read(key, config::getDouble, 0.0);
    if (!(x == 0.0 || (x >= 0.01 && x <= 1024))) {
      problem(key, "must be 0 (every core) or between 0.01 and 1024 cores, got " + x);
    }
    return x;
  }

  boolean bool(String key) {
    return read(key, config::getBoolean, false);
  }

  /** A string; blank counts as "not set". */
  Optional<String> optionalText(String key) {
    String s = read(key, config::getString, "");
    return s.isBlank() ? Optional.empty() : Optional.of(s.strip());
  }

  String text(String key) {
    String s = read(key, config::getString, "");
    if (s.isBlank()) {
      problem(key, "must not be empty");
    }
    return s;
  }

  /** Reports a problem with {@code key} that a cross-key rule found. */
  void problem(String key, String whatIsWrong) {
    Map<String, String> details = new LinkedHashMap<>();
    details.put("key", key);
    if (config.hasPath(key)) {
      details.put("origin", config.getValue(key).origin().description());
    }
    problems.add(Diagnostic.of(Code.E_CFG_001, key + " " + whatIsWrong, details));
  }

  /** Adds problems found by a whole-tree check ({@link SettingsShape}). */
  void problems(List<Diagnostic> found) {
    problems.addAll(found);
  }

  /** Throws every problem found, if any. */
  void finish() {
    if (!problems.isEmpty()) {
      throw new SettingsInvalid(problems);
    }
  }

  private <T> T read(String key, Function<String, T> getter, T placeholder) {
    try {
      return getter.apply(key);
    } catch (ConfigException.Missing e) {
      problem(key, "is missing (reference.conf defines it; was it overridden with null?)");
    } catch (ConfigException e) {
      problem(key, "has a value of the wrong kind: " + reason(e));
    }
    return placeholder;
  }

  /** Typesafe Config's message without the origin and key it repeats (both are details). */
  private static String reason(ConfigException e) {
    String message = e.getMessage();
    if (e.origin() != null && message.startsWith(e.origin().description() + ": ")) {
      message = message.substring(e.origin().description().length() + 2);
    }
    int keyEnd = message.startsWith("Invalid value at '") ? message.indexOf("': ") : -1;
    return keyEnd >= 0 ? message.substring(keyEnd + 3) : message;
  }

  /** A duration as a person writes it in HOCON: {@code 15s}, {@code 200ms}. */
  static String show(Duration d) {
    if (d.toNanos() % 1_000_000 != 0) {
      return d.toNanos() + "ns";
    }
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
  }
}
