package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.runtime.escape.HostTargets;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.harness.contain.RunSandbox;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The escape suite against a hostile bridged tool (docs/containment.md "Escape suite"): the capsule
 * grants {@code sh}, and the harness uses it to run the hostile script. With the run contained, the
 * call runs in a new sandbox of the run, so it is held exactly like the harness.
 */
class ToolEscapeTest {
  private static final ActorTestKit KIT = ActorTestKit.create();

  @TempDir Path tmp;

  @AfterAll
  static void shutdown() {
    KIT.shutdownTestKit();
  }

  @Test
  void aHostileToolEscapesNowhere() throws Exception {
    Path workdir = Files.createDirectories(tmp.resolve("work")).toRealPath();
    Path files = Files.createDirectories(tmp.resolve("files")).toRealPath();
    Map<String, String> env = Map.of("PATH", "/usr/bin:/bin");
    BridgeTestSupport.Recorder recorder = new BridgeTestSupport.Recorder();
    try (HostTargets host = new HostTargets();
        RunSandbox sandbox =
            RunSandbox.open(
                ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED),
                new HarnessGrants(
                    List.of(), List.of(), false, Path.of(System.getProperty("user.home"))),
                workdir,
                files,
                (h, p, r, n) -> {})) {
      ToolBridge bridge =
          ToolBridge.start(
                  KIT.system(),
                  BridgeConfig.defaults(),
                  new ToolWorkspace(workdir, env, false, true),
                  ShellTool.resolveAll(List.of("sh"), env),
                  recorder)
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS);
      try {
        bridge.contain(Optional.of(sandbox));
        Path script = HostTargets.installScript(workdir);
        ObjectNode arguments = BridgeTestSupport.JSON.createObjectNode();
        ArrayNode args = arguments.putArray("args");
        args.add(script.toString());
        host.args().forEach(args::add);
        JsonNode result = new BridgeTestSupport.Client(bridge).call("sh", arguments.toString());
        assertFalse(result.get("isError").asBoolean(), result.toString());
        host.assertAllHeld(BridgeTestSupport.text(result), HostTargets.ALWAYS);
        assertTrue(recorder.next() instanceof ToolCallEvent.Started);
        assertEquals(ToolCallEvent.CallStatus.OK, recorder.nextFinished().status());
      } finally {
        bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
      }
      recorder.assertEmpty();
    }
  }
}
