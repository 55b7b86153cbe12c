package io.capsule.config.settings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * {@code capsule.run.*}: the timers and limits of one capsule run (docs/run-semantics.md §3–§10).
 * See {@code reference.conf} for each default's reason.
 *
 * @param workRoot where run directories are created
 * @param trace whether {@code trace.jsonl} is written
 * @param versionProbeTimeout bound on the version probe and login check
 * @param driverCallTimeout deadline of each driver call
 * @param inactivityTimeout silence after which the harness is killed (E-RUN-035)
 * @param terminalGrace time to exit by itself after a terminal event or EOF
 * @param interruptGrace absolute deadline to end a turn after a delivered interrupt
 * @param stderrTailBytes stderr bytes kept for classify-exit and the trace
 * @param batchMaxLines most lines per parse call (at least 1)
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
    String workRoot = r.text(p + "work-root");
    return new RunSettings(
        Path.of(workRoot.isBlank() ? "." : workRoot),
        r.bool(p + "trace"),
        r.positive(p + "version-probe-timeout"),
        r.positive(p + "driver-call-timeout"),
        r.positive(p + "inactivity-timeout"),
        r.nonNegative(p + "terminal-grace"),
        r.nonNegative(p + "interrupt-grace"),
        (int) r.bytes(p + "stderr-tail-bytes", 0, Integer.MAX_VALUE),
        r.count(p + "batch-max-lines", 1, Integer.MAX_VALUE),
        (int) r.bytes(p + "line-cap-bytes", 1, Integer.MAX_VALUE - 8),
        r.nonNegative(p + "stderr-drain-timeout"),
        r.count(p + "keep.count", 0, Integer.MAX_VALUE),
        r.nonNegative(p + "keep.age"));
  }
}
