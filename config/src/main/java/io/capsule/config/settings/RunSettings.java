package io.capsule.config.settings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * {@code capsule.run.*}: the timers and limits of one capsule run (docs/run-semantics.md §3–§10).
 * See {@code reference.conf} for each default's reason.
 *
 * @param workRoot where run directories are created ({@link #privateWorkRoot} when not set)
 * @param trace whether {@code trace.jsonl} is written
 * @param versionProbeTimeout bound on the version probe and login check
 * @param driverCallTimeout deadline of each driver call
 * @param inactivityTimeout silence after which the harness is killed (E-RUN-035)
 * @param terminalGrace time to exit by itself after a terminal event or EOF
 * @param interruptGrace absolute deadline to end a turn after a delivered interrupt
 * @param stderrTailBytes stderr bytes kept for classify-exit and the trace
 * @param batchMaxLines most lines per parse call (at least 1)
 * @param batchesInFlight stdout batches handed on and not yet parsed (at least 1)
 * @param lineCapBytes longest stdout line kept whole
 * @param stderrDrainTimeout wait for stderr EOF after the harness exits
 * @param keepCount finished run directories kept in the work root, newest first
 * @param keepAge finished run directories older than this are removed whatever the count
 */
public record RunSettings(
    Path workRoot,
    boolean trace,
    Duration versionProbeTimeout,
    Duration driverCallTimeout,
    Duration inactivityTimeout,
    Duration terminalGrace,
    Duration interruptGrace,
    int stderrTailBytes,
    int batchMaxLines,
    int batchesInFlight,
    int lineCapBytes,
    Duration stderrDrainTimeout,
    int keepCount,
    Duration keepAge) {

  public RunSettings {
    Objects.requireNonNull(workRoot, "workRoot");
    Objects.requireNonNull(versionProbeTimeout, "versionProbeTimeout");
    Objects.requireNonNull(driverCallTimeout, "driverCallTimeout");
    Objects.requireNonNull(inactivityTimeout, "inactivityTimeout");
    Objects.requireNonNull(terminalGrace, "terminalGrace");
    Objects.requireNonNull(interruptGrace, "interruptGrace");
    Objects.requireNonNull(stderrDrainTimeout, "stderrDrainTimeout");
    Objects.requireNonNull(keepAge, "keepAge");
  }

  static RunSettings read(SettingsReader r) {
    String p = "capsule.run.";
    return new RunSettings(
        r.optionalText(p + "work-root")
            .map(Path::of)
            .orElseGet(() -> privateWorkRoot(System.getenv(), System.getProperty("user.home"))),
        r.bool(p + "trace"),
        r.positive(p + "version-probe-timeout"),
        r.positive(p + "driver-call-timeout"),
        r.positive(p + "inactivity-timeout"),
        r.nonNegative(p + "terminal-grace"),
        r.nonNegative(p + "interrupt-grace"),
        (int) r.bytes(p + "stderr-tail-bytes", 0, Integer.MAX_VALUE),
        r.count(p + "batch-max-lines", 1, Integer.MAX_VALUE),
        r.count(p + "batches-in-flight", 1, Integer.MAX_VALUE),
        (int) r.bytes(p + "line-cap-bytes", 1, Integer.MAX_VALUE - 8),
        r.nonNegative(p + "stderr-drain-timeout"),
        r.count(p + "keep.count", 0, Integer.MAX_VALUE),
        r.nonNegative(p + "keep.age"));
  }

  /**
   * The work root when {@code capsule.run.work-root} is not set: {@code
   * $XDG_STATE_HOME/capsule/runs}, or {@code $HOME/.local/state/capsule/runs} (the XDG default),
   * {@code userHome} standing in for an unset or relative {@code HOME}. A relative {@code
   * XDG_STATE_HOME} is ignored, as the XDG spec says. Private, not below {@code /tmp}: Gemini CLI
   * ignores a settings file when any folder above it may be written by others (issue 20), and run
   * directories hold a harness's credentials while it runs. The run makes it 0700 when it creates
   * it.
   */
  static Path privateWorkRoot(Map<String, String> env, String userHome) {
    String state = env.getOrDefault("XDG_STATE_HOME", "");
    if (!state.isBlank() && Path.of(state).isAbsolute()) {
      return Path.of(state, "capsule", "runs");
    }
    String home = env.getOrDefault("HOME", "");
    Path base = !home.isBlank() && Path.of(home).isAbsolute() ? Path.of(home) : Path.of(userHome);
    return base.resolve(".local/state/capsule/runs");
  }
}
