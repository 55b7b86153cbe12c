package io.capsule.config.settings;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DidYouMean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks the shape of {@code capsule.*} against the merged {@code reference.conf}, the one list of
 * known settings (every module adds its own file, so a module's new keys are known as soon as it is
 * on the classpath): a key no {@code reference.conf} defines is refused ({@code E-CFG-002}, with
 * the closest known key), and a duration written without a unit ({@code E-CFG-003}: Typesafe Config
 * reads a bare {@code 5} as five milliseconds). Pure; see docs/settings.md, "Strictness".
 *
 * <p>Not checked here: Pekko dispatcher blocks ({@code capsule.*-dispatcher}, whose keys are
 * Pekko's), and the namespaces of {@link #OTHER_READERS}.
 */
final class SettingsShape {
  /** How reference.conf writes a duration: a number and a unit ({@code 15s}, {@code 500ms}). */
  private static final Pattern DURATION =
      Pattern.compile(
          "\\d+(\\.\\d+)?\\s*(ns|nanos?|nanoseconds?|us|micros?|microseconds?|ms|millis?"
              + "|milliseconds?|s|seconds?|m|minutes?|h|hours?|d|days?)");

  /**
   * Namespaces read as system properties by others, not settings: the command's logging ({@code
   * capsule.log.*}, logback.xml) and the benchmarks' options ({@code capsule.bench.*}).
   */
  private static final Set<String> OTHER_READERS = Set.of("log", "bench");

  private static final Pattern BARE_NUMBER = Pattern.compile("\\d+(\\.\\d+)?");

  private SettingsShape() {}

  /** Every problem of {@code effective}'s {@code capsule.*} against {@code reference}. */
  static List<Diagnostic> check(Config effective, Config reference) {
    List<Diagnostic> problems = new ArrayList<>();
    if (!effective.hasPath("capsule") || !reference.hasPath("capsule")) {
      return problems;
    }
    Config known = reference.getConfig("capsule");
    Set<String> knownKeys = new TreeSet<>();
    for (Map.Entry<String, ConfigValue> e : known.entrySet()) {
      knownKeys.add("capsule." + e.getKey());
    }
    for (Map.Entry<String, ConfigValue> e : effective.getConfig("capsule").entrySet()) {
      String first = e.getKey().split("\\.", 2)[0];
      if (first.endsWith("-dispatcher") || OTHER_READERS.contains(first)) {
        continue;
      }
      String key = "capsule." + e.getKey();
      if (!known.hasPathOrNull(e.getKey())) {
        problems.add(
            problem(
                Code.E_CFG_002,
                key,
                key + " is not a setting" + DidYouMean.suffix(key, knownKeys),
                e.getValue()));
      } else if (isDuration(known.getValue(e.getKey())) && isBareNumber(e.getValue())) {
        problems.add(
            problem(
                Code.E_CFG_003,
                key,
                key
                    + " = "
                    + e.getValue().unwrapped()
                    + " has no unit; write one, e.g. "
                    + e.getValue().unwrapped()
                    + "s or "
                    + e.getValue().unwrapped()
                    + "ms (reference.conf: "
                    + known.getValue(e.getKey()).unwrapped()
                    + ")",
                e.getValue()));
      }
    }
    return problems;
  }

  private static boolean isDuration(ConfigValue v) {
    return v.valueType() == ConfigValueType.STRING
        && DURATION.matcher(String.valueOf(v.unwrapped()).strip()).matches();
  }

  /** A number with no unit, other than zero (zero is zero in any unit). */
  private static boolean isBareNumber(ConfigValue v) {
    String text = String.valueOf(v.unwrapped()).strip();
    boolean number =
        v.valueType() == ConfigValueType.NUMBER
            || (v.valueType() == ConfigValueType.STRING && BARE_NUMBER.matcher(text).matches());
    return number && Double.parseDouble(text) != 0;
  }

  private static Diagnostic problem(Code code, String key, String message, ConfigValue value) {
    Map<String, String> details = new LinkedHashMap<>();
    details.put("key", key);
    details.put("origin", value.origin().description());
    return Diagnostic.of(code, message, details);
  }
}
