package io.capsule.runtime;

import io.capsule.config.settings.RunSettings;
import io.capsule.runtime.bridge.BridgeConfig;
import io.capsule.runtime.core.RunRetention;
import io.capsule.runtime.harness.HarnessLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The numbers a run needs (docs/run-semantics.md; every one a {@code capsule.run.*} setting). The
 * run owns every run timer: version probe bound, driver call deadline, inactivity window, terminal
 * grace, interrupt grace (absolute); the harness side's numbers travel in {@link #harness()}.
 *
 * @param versionProbeTimeout bound of the version probe (10 s)
 * @param driverCallTimeout deadline of each driver call, restarted before each call (30 s)
 * @param inactivityTimeout no stdout line for this long kills the harness: E-RUN-035 (600 s)
 * @param terminalGrace after a terminal event or EOF the harness may exit by itself (3 s)
 * @param interruptGrace after a delivered interrupt, an absolute deadline (10 s)
 * @param workRoot where each run gets its directory (trace, files directory)
 * @param blockingDispatcher config path of the dispatcher for driver calls and file work
 * @param harness the harness side's limits
 * @param bridge the tool bridge's limits and policy, for runs of capsules with tools ({@code
 *     capsule.bridge.*}, see {@link BridgeConfig#from}; an embedder adds its {@code ToolPolicy}
 *     with {@link #withBridge})
 */
public record RunLimits(
    Duration versionProbeTimeout,
    Duration driverCallTimeout,
    Duration inactivityTimeout,
    Duration terminalGrace,
    Duration interruptGrace,
    Path workRoot,
    String blockingDispatcher,
    HarnessLimits harness,
    BridgeConfig bridge,
    RunRetention.Keep keep) {

  /** By default: the newest 100 finished runs, none older than 7 days (capsule.run.keep). */
  public static final RunRetention.Keep DEFAULT_KEEP =
      new RunRetention.Keep(100, Duration.ofDays(7));

  /** The dispatcher runtime-actors' {@code reference.conf} defines for blocking work. */
  public static final String BLOCKING_DISPATCHER = "capsule.blocking-dispatcher";

  /** The growing dispatcher for harness pipe I/O (two threads per live harness). */
  public static final String HARNESS_IO_DISPATCHER = "capsule.harness-io-dispatcher";

  public RunLimits {
    Objects.requireNonNull(versionProbeTimeout, "versionProbeTimeout");
    Objects.requireNonNull(driverCallTimeout, "driverCallTimeout");
    Objects.requireNonNull(inactivityTimeout, "inactivityTimeout");
    Objects.requireNonNull(terminalGrace, "terminalGrace");
    Objects.requireNonNull(interruptGrace, "interruptGrace");
    Objects.requireNonNull(workRoot, "workRoot");
    Objects.requireNonNull(blockingDispatcher, "blockingDispatcher");
    Objects.requireNonNull(harness, "harness");
    Objects.requireNonNull(bridge, "bridge");
    Objects.requireNonNull(keep, "keep");
  }

  /** The limits with the bridge's defaults ({@link BridgeConfig#defaults()}). */
  public RunLimits(
      Duration versionProbeTimeout,
      Duration driverCallTimeout,
      Duration inactivityTimeout,
      Duration terminalGrace,
      Duration interruptGrace,
      Path workRoot,
      String blockingDispatcher,
      HarnessLimits harness) {
    this(
        versionProbeTimeout,
        driverCallTimeout,
        inactivityTimeout,
        terminalGrace,
        interruptGrace,
        workRoot,
        blockingDispatcher,
        harness,
        BridgeConfig.defaults(),
        DEFAULT_KEEP);
  }

  public RunLimits withBridge(BridgeConfig b) {
    return new RunLimits(
        versionProbeTimeout,
        driverCallTimeout,
        inactivityTimeout,
        terminalGrace,
        interruptGrace,
        workRoot,
        blockingDispatcher,
        harness,
        b,
        keep);
  }

  /** The {@code capsule.run.*} settings as a run's limits. */
  public static RunLimits from(RunSettings run) {
    return new RunLimits(
        run.versionProbeTimeout(),
        run.driverCallTimeout(),
        run.inactivityTimeout(),
        run.terminalGrace(),
        run.interruptGrace(),
        run.workRoot(),
        BLOCKING_DISPATCHER,
        new HarnessLimits(
                run.batchMaxLines(),
                run.lineCapBytes(),
                Math.max(1, run.stderrTailBytes()),
                run.stderrDrainTimeout(),
                run.versionProbeTimeout(),
                HARNESS_IO_DISPATCHER)
            .withBatchesInFlight(run.batchesInFlight()),
        BridgeConfig.defaults(),
        new RunRetention.Keep(run.keepCount(), run.keepAge()));
  }

  public RunLimits withHarness(HarnessLimits h) {
    return new RunLimits(
        versionProbeTimeout,
        driverCallTimeout,
        inactivityTimeout,
        terminalGrace,
        interruptGrace,
        workRoot,
        blockingDispatcher,
        h,
        bridge,
        keep);
  }

  public RunLimits withKeep(RunRetention.Keep k) {
    return new RunLimits(
        versionProbeTimeout,
        driverCallTimeout,
        inactivityTimeout,
        terminalGrace,
        interruptGrace,
        workRoot,
        blockingDispatcher,
        harness,
        bridge,
        k);
  }

  /** The spec's defaults, with runs under {@code workRoot}. */
  public static RunLimits defaults(Path workRoot) {
    return new RunLimits(
        Duration.ofSeconds(10),
        Duration.ofSeconds(30),
        Duration.ofSeconds(600),
        Duration.ofSeconds(3),
        Duration.ofSeconds(10),
        workRoot,
        BLOCKING_DISPATCHER,
        HarnessLimits.defaults().withIoDispatcher(HARNESS_IO_DISPATCHER));
  }

  public RunLimits withInactivityTimeout(Duration d) {
    return new RunLimits(
        versionProbeTimeout,
        driverCallTimeout,
        d,
        terminalGrace,
        interruptGrace,
        workRoot,
        blockingDispatcher,
        harness,
        bridge,
        keep);
  }

  public RunLimits withTerminalGrace(Duration d) {
    return new RunLimits(
        versionProbeTimeout,
        driverCallTimeout,
        inactivityTimeout,
        d,
        interruptGrace,
        workRoot,
        blockingDispatcher,
        harness,
        bridge,
        keep);
  }

  public RunLimits withInterruptGrace(Duration d) {
    return new RunLimits(
        versionProbeTimeout,
        driverCallTimeout,
        inactivityTimeout,
        terminalGrace,
        d,
        workRoot,
        blockingDispatcher,
        harness,
        bridge,
        keep);
  }

  public RunLimits withDriverCallTimeout(Duration d) {
    return new RunLimits(
        versionProbeTimeout,
        d,
        inactivityTimeout,
        terminalGrace,
        interruptGrace,
        workRoot,
        blockingDispatcher,
        harness,
        bridge,
        keep);
  }
}
