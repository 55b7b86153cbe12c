package io.capsule.runtime.core;

import io.capsule.driver.api.QuotaWindow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Subscription windows as the harness last reported them (docs/run-semantics.md §6). A later report
 * replaces windows of the same name and keeps the others. A window with a bad name or a bad {@code
 * used} is refused with a reason; the runtime records and forwards quota, it never acts on it. Not
 * thread-safe.
 */
public final class QuotaBook {

  /** 1–64 of {@code a-z0-9-}, starting with a letter or digit. */
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  /** One report's effect: the windows taken and, for each refused one, why. */
  public record Applied(List<QuotaWindow> accepted, List<String> refusals) {
    public Applied {
      accepted = List.copyOf(accepted);
      refusals = List.copyOf(refusals);
    }
  }

  private final Map<String, QuotaWindow> windows = new LinkedHashMap<>();

  public Applied apply(List<QuotaWindow> report) {
    List<QuotaWindow> accepted = new ArrayList<>();
    List<String> refusals = new ArrayList<>();
    for (QuotaWindow w : report) {
      String why = refusal(w);
      if (why == null) {
        windows.put(w.name(), w);
        accepted.add(w);
      } else {
        refusals.add(why);
      }
    }
    return new Applied(accepted, refusals);
  }

  /** All windows currently known, in first-seen order. */
  public List<QuotaWindow> windows() {
    return List.copyOf(windows.values());
  }

  /** Why a window is refused, or null when it is valid. */
  static String refusal(QuotaWindow w) {
    if (!NAME.matcher(w.name()).matches()) {
      return "quota window refused: bad name (want 1-64 of a-z0-9-, starting with a letter or"
          + " digit), "
          + w.name().length()
          + " chars";
    }
    if (w.used().isPresent()) {
      double used = w.used().get();
      if (!Double.isFinite(used) || used < 0.0 || used > 1.0) {
        return "quota window '" + w.name() + "' refused: used " + used + " is outside 0..1";
      }
    }
    return null;
  }
}
