package io.capsule.bench.contain;

import io.capsule.runtime.bridge.BridgeConfig;
import io.capsule.runtime.bridge.ShellTool;
import io.capsule.runtime.bridge.ToolBridge;
import io.capsule.runtime.bridge.ToolWorkspace;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import io.capsule.runtime.harness.contain.RunSandbox;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One bridged tool call ({@code echo}) over the run's real tool bridge, as a harness makes it (MCP
 * {@code tools/call} over loopback HTTP), with the tool run as a host process ({@code
 * contained=false}) or in a new sandbox of the run ({@code true}, docs/containment.md), in the same
 * run. Each operation checks the result and throws on a wrong one.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 4)
@Fork(1)
public class ContainToolCallBench {

  @Param({"false", "true"})
  public boolean contained;

  private static final String CALL =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
          + "{\"name\":\"echo\",\"arguments\":{\"args\":[\"called\"]}}}";

  private ActorSystem<Void> system;
  private Path workdir;
  private RunSandbox run;
  private ToolBridge bridge;
  private HttpClient http;
  private HttpRequest request;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    system = ActorSystem.create(Behaviors.empty(), "tool-call-bench");
    workdir = Files.createTempDirectory("capsule-tool-bench-").toRealPath();
    Map<String, String> env = Map.of("PATH", "/usr/bin:/bin");
    bridge =
        ToolBridge.start(
                system,
                BridgeConfig.defaults(),
                new ToolWorkspace(workdir, env, false, contained),
                ShellTool.resolveAll(List.of("echo"), env),
                ToolBridge.Listener.NONE)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    if (contained) {
      run =
          RunSandbox.open(
              ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED),
              new HarnessGrants(List.of(), List.of(), false, Path.of("/root")),
              workdir,
              workdir,
              (h, p, r, n) -> {});
      bridge.contain(Optional.of(run));
    }
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    request =
        HttpRequest.newBuilder(URI.create(bridge.url()))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + bridge.bearerToken())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(CALL))
            .build();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    bridge.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    if (run != null) {
      run.close();
    }
    system.terminate();
    Files.deleteIfExists(workdir);
  }

  @Benchmark
  public String toolCall() throws IOException, InterruptedException {
    String body = http.send(request, HttpResponse.BodyHandlers.ofString()).body();
    if (!body.contains("called") || !body.contains("\"isError\":false")) {
      throw new IllegalStateException("the tool answered " + body);
    }
    return body;
  }
}
