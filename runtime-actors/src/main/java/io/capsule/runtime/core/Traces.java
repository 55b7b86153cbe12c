package io.capsule.runtime.core;

import io.capsule.driver.api.QuotaWindow;
import io.capsule.driver.api.Usage;
import io.capsule.runtime.javadsl.RunEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Shapes shared by trace records and progress: usage with none kept, quota windows. */
final class Traces {

  private Traces() {}

  /** Usage for the trace: a member not reported is {@code null}, never 0. */
  static Map<String, Object> usage(Usage u) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("input", u.input().orElse(null));
    m.put("output", u.output().orElse(null));
    m.put("cache_read", u.cacheRead().orElse(null));
    m.put("cache_creation", u.cacheCreation().orElse(null));
    m.put("thinking", u.thinking().orElse(null));
    return m;
  }

  static List<Map<String, Object>> windows(List<QuotaWindow> windows) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (QuotaWindow w : windows) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", w.name());
      m.put("used", w.used().orElse(null));
      m.put("resets_at", w.resetsAt().orElse(null));
      m.put("window_minutes", w.windowMinutes().orElse(null));
      m.put("state", w.state().map(s -> s.witName()).orElse(null));
      out.add(m);
    }
    return out;
  }

  static List<RunEvent.Window> runWindows(List<QuotaWindow> windows) {
    return windows.stream()
        .map(
            w ->
                new RunEvent.Window(
                    w.name(),
                    w.used(),
                    w.resetsAt(),
                    w.windowMinutes(),
                    w.state().map(s -> s.witName())))
        .toList();
  }
}
