package io.capsule.cli;

import io.capsule.config.settings.CapsuleSettings;
import io.capsule.config.settings.HarnessSettings;
import io.capsule.config.settings.ProtocolSettings;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.bridge.BridgeConfig;
import io.capsule.runtime.driver.DriverLoading;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import java.nio.file.Path;

/** Maps the runtime's settings onto the runtime's parts, the same way for every command. */
final class RuntimeWiring {
  private RuntimeWiring() {}

  static RunLimits limits(CapsuleSettings settings) {
    RunLimits limits =
        RunLimits.from(settings.run()).withBridge(BridgeConfig.from(settings.bridge()));
    return limits.withHarness(limits.harness().withContainment(containment(settings)));
  }

  /** {@code capsule.harness.*} onto the harness's containment. */
  static ContainmentConfig containment(CapsuleSettings settings) {
    HarnessSettings h = settings.harness();
    return new ContainmentConfig(
        ContainmentConfig.Mode.valueOf(h.containment().name()),
        Path.of(h.bwrap()),
        Path.of(h.socat()),
        h.egressMaxConnections(),
        h.egressHeaderCapBytes(),
        h.egressIdleTimeout(),
        h.egressConnectTimeout(),
        h.resources());
  }

  /** {@code capsule.protocol.*} onto the protocol module's own settings record. */
  static ProtocolConfig protocol(CapsuleSettings settings) {
    ProtocolSettings p = settings.protocol();
    return ProtocolConfig.builder()
        .frameCapBytes(p.frameCapBytes())
        .heartbeatIdle(p.heartbeatIdle())
        .deadAfter(p.deadAfter())
        .helloTimeout(p.helloTimeout())
        .replayBufferBound(p.replayBufferMaxFrames())
        .holdBound(p.gapHoldMax())
        .backoffMin(p.reconnect().minBackoff())
        .backoffMax(p.reconnect().maxBackoff())
        .backoffJitter(p.reconnect().jitter())
        .tokenClockSkew(p.tokenClockSkew())
        .pingInterval(p.liveness().pingInterval())
        .silenceLimit(p.liveness().silenceLimit())
        .build();
  }

  static DriverLoader driverLoader(CapsuleSettings settings) {
    return DriverLoader.create(
        settings.driver().engine().configName(),
        new DriverLoader.Settings(
            settings.driver().memoryCapBytes(), settings.run().driverCallTimeout()));
  }

  /** Folder capsules load their driver artifact through the WASM loader. */
  static DriverLoading wasm(DriverLoader loader) {
    return manifest -> {
      LoadedDriver loaded = loader.load(manifest);
      return new DriverLoading.Loaded(
          loaded.description(), loaded::newInstance, loaded.describeNotes());
    };
  }
}
