package io.capsule.runtime.run;

import io.capsule.driver.api.Bridge;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.bridge.ToolBridgeHost;
import io.capsule.runtime.bridge.ToolWorkspace;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.driver.ResolvedCapsule;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;

/**
 * The tool bridge of a run (issue 8: started before launch, stopped before the report), as the run
 * spawns it. Its state (listening, stopping, calls in flight) is the {@link RunGate}'s.
 */
final class RunBridge {

  private RunBridge() {}

  /**
   * The host of a bridge offering {@code offered}: the capsule's tools after the request's
   * narrowing ({@link ToolNarrowing}), its whole inventory, so {@code tools/list} shows only these,
   * a call to any other is refused as an unknown tool ({@code E-TOOL-002}), and the launch request
   * names only these.
   */
  static Behavior<ToolBridgeHost.Command> host(
      RunLimits limits,
      ResolvedCapsule capsule,
      Map<String, String> hostEnv,
      Path workdir,
      List<String> offered,
      Executor blocking,
      ActorRef<ToolBridgeHost.Report> run) {
    return ToolBridgeHost.create(
        limits.bridge(),
        new ToolWorkspace(
            workdir.toAbsolutePath(),
            RunDirs.grantedEnv(capsule, hostEnv),
            capsule.manifest().capabilities().filesystem().readOnly(),
            limits.harness().containment().mode() != ContainmentConfig.Mode.OFF),
        offered,
        blocking,
        run);
  }

  /** The {@code tool_bridge} trace line of a bridge that listens. */
  static TraceRecord listening(Bridge bridge) {
    return TraceRecord.of("tool_bridge")
        .with("url", bridge.url())
        .with("tools", bridge.toolNames());
  }
}
