package io.capsule.runtime.bridge;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.Bridge;
import io.capsule.runtime.harness.ProcessGroup;
import io.capsule.runtime.harness.contain.RunSandbox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import scala.concurrent.duration.FiniteDuration;

/**
 * One run's tool bridge: the capsule's tools offered to the harness over MCP on {@code 127.0.0.1},
 * behind a fresh bearer token. The run starts it before {@code launch} (only when the capsule has
 * tools), puts {@link #toBridge()} into the launch request, calls {@link #beginEnding()} when the
 * run's outcome is decided and {@link #stop()} when the run ends.
 *
 * <p>Thread-safe; every method may be called from any thread.
 */
public final class ToolBridge {

  /**
   * What the bridge reports to its run.
   *
   * <p>Threading contract: called from foreign threads (Pekko HTTP stream threads, process reaper
   * and pump threads), possibly concurrently, never from the run's actor. An implementation must
   * not block and must not touch actor state: the run {@code tell}s itself a message. An exception
   * it throws is swallowed (logged by nobody), so it must not rely on throwing.
   */
  public interface Listener {
    /** A request arrived with the right token: the harness is alive (resets inactivity). */
    void onActivity();

    /** A call started or finished (refusals finish without starting). */
    void onCall(ToolCallEvent event);

    /** A listener that ignores everything. */
    Listener NONE =
        new Listener() {
          @Override
          public void onActivity() {}

          @Override
          public void onCall(ToolCallEvent event) {}
        };
  }

  /** How long {@link #stop()} lets responses of killed calls reach the harness. */
  private static final Duration TERMINATION_DEADLINE = Duration.ofSeconds(2);

  /**
   * How long {@link #stop()} waits for killed calls to report {@code Finished}: SIGKILL is
   * immediate, the rest is a tool's pipe grace (2 s) with room to spare on a loaded machine.
   */
  private static final Duration DRAIN_DEADLINE = Duration.ofSeconds(10);

  private static final SecureRandom RANDOM = new SecureRandom();

  private final String url;
  private final String token;
  private final String serverName;
  private final List<String> toolNames;
  private final ServerBinding binding;
  private final CallRunner calls;
  private final ExecutorService io;
  private final AtomicReference<CompletableFuture<Done>> stopped = new AtomicReference<>();

  private ToolBridge(
      String token,
      String serverName,
      List<String> toolNames,
      ServerBinding binding,
      CallRunner calls,
      ExecutorService io) {
    this.url = "http://127.0.0.1:" + binding.localAddress().getPort() + BridgeHttp.PATH;
    this.token = token;
    this.serverName = serverName;
    this.toolNames = toolNames;
    this.binding = binding;
    this.calls = calls;
    this.io = io;
  }

  /**
   * Binds a new bridge on {@code 127.0.0.1}, an ephemeral port, path {@code /bridge}.
   *
   * <p>With {@code workspace.readOnly()}, first checks (once) that this host can mount the workdir
   * read-only for a tool; if it cannot, the bridge still starts, and every call is refused {@code
   * E-TOOL-006} (fail closed, visible to the model and the trace).
   *
   * @param tools the inventory, fixed for the bridge's life (see {@link ShellTool#resolveAll})
   * @return the bound bridge, or a failed stage with {@link ToolBridgeException} ({@code
   *     E-TOOL-009}) when it cannot bind
   */
  public static CompletionStage<ToolBridge> start(
      ActorSystem<?> system,
      BridgeConfig config,
      ToolWorkspace workspace,
      List<ShellTool> tools,
      Listener listener) {
    Objects.requireNonNull(system, "system");
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(workspace, "workspace");
    Objects.requireNonNull(listener, "listener");
    List<ShellTool> inventory = List.copyOf(tools);
    ExecutorService pool = Executors.newCachedThreadPool(daemonThreads());
    Listener safe = new SafeListener(listener);
    boolean asRoot = runningAsRoot();
    CompletableFuture<CallGate.ReadOnly> readOnly =
        workspace.readOnly()
            ? CompletableFuture.supplyAsync(() -> probeReadOnly(workspace, asRoot), pool)
            : CompletableFuture.completedFuture(CallGate.ReadOnly.NOT_REQUIRED);
    String token = newToken();
    return readOnly
        .thenCompose(
            rule -> {
              CallGate gate = new CallGate(inventory, rule, config.policy());
              CallRunner runner =
                  new CallRunner(
                      gate,
                      config,
                      workspace,
                      rule == CallGate.ReadOnly.ENFORCED,
                      asRoot,
                      workspace.awaitsSandbox(),
                      lateTolerant(pool),
                      system.scheduler(),
                      system.executionContext(),
                      safe);
              McpProtocol mcp = new McpProtocol(config.serverName(), inventory);
              BridgeHttp http = new BridgeHttp(token, mcp, runner, config, safe);
              return Http.get(system)
                  .newServerAt("127.0.0.1", 0)
                  .withSettings(serverSettings(system, config))
                  .bindFlow(http.flow())
                  .thenApply(
                      binding ->
                          new ToolBridge(
                              token,
                              config.serverName(),
                              inventory.stream().map(ShellTool::name).toList(),
                              binding,
                              runner,
                              pool));
            })
        .handle(
            (bridge, failure) -> {
              if (failure == null) {
                return bridge;
              }
              pool.shutdownNow();
              throw new ToolBridgeException(
                  Diagnostic.of(
                      Code.E_TOOL_009, "the tool bridge could not bind on 127.0.0.1: " + failure),
                  failure);
            });
  }

  /** {@code http://127.0.0.1:<port>/bridge}. */
  public String url() {
    return url;
  }

  /** The token every request must carry as {@code Authorization: Bearer <token>}. */
  public String bearerToken() {
    return token;
  }

  public String serverName() {
    return serverName;
  }

  /** The bare tool names, in manifest order. */
  public List<String> toolNames() {
    return toolNames;
  }

  /** The WIT {@code bridge} record for the launch request. */
  public Bridge toBridge() {
    return new Bridge(serverName, url, token, toolNames);
  }

  /** Tool calls running now. */
  public int callsInFlight() {
    return calls.inFlight();
  }

  /**
   * The run is ending: calls from now on are refused {@code E-TOOL-003}; running ones go on until
   * they finish or {@link #stop()} kills them. Idempotent.
   */
  public void beginEnding() {
    calls.beginEnding();
  }

  /**
   * Where calls run from now on: in a new sandbox of the run's when present, else as host
   * processes. Calls that arrived before this wait for it (bounded). Only the first one counts.
   */
  public void contain(Optional<RunSandbox> sandbox) {
    calls.contain(sandbox);
  }

  /**
   * Refuses new calls, kills every running tool's process group (those calls finish {@code
   * STOPPED}), closes the listening socket and every connection. Completes when the port is
   * released and every killed call has reported {@code Finished} (each bounded, so it always
   * completes). Idempotent: later calls return the same stage.
   */
  public CompletionStage<Done> stop() {
    CompletableFuture<Done> fresh = new CompletableFuture<>();
    if (!stopped.compareAndSet(null, fresh)) {
      return stopped.get();
    }
    CompletableFuture<Void> drained =
        calls.stopAll().completeOnTimeout(null, DRAIN_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    CompletableFuture<?> unbound =
        binding
            .terminate(TERMINATION_DEADLINE)
            .toCompletableFuture()
            .handle((terminated, failure) -> Done.getInstance());
    CompletableFuture.allOf(drained.exceptionally(failure -> null), unbound)
        .whenComplete(
            (ignored, failure) -> {
              io.shutdown();
              fresh.complete(Done.getInstance());
            });
    return fresh;
  }

  @Override
  public String toString() {
    return "ToolBridge[url=" + url + ", tools=" + toolNames + "]";
  }

  private static ServerSettings serverSettings(ActorSystem<?> system, BridgeConfig config) {
    ServerSettings base = ServerSettings.create(system.classicSystem());
    // Pekko's own request timeout would answer 503 under a long tool call; the bridge bounds the
    // body read and the call itself, so Pekko's bound only backs those up.
    Duration backstop =
        config.requestReadTimeout().plus(config.callTimeout()).plus(Duration.ofSeconds(30));
    FiniteDuration finite = FiniteDuration.fromNanos(backstop.toNanos());
    return base.withMaxConnections(config.maxConnections())
        // the bridge bounds the body itself (413 past the cap); the parser's bound is a backstop
        .withParserSettings(
            base.getParserSettings().withMaxContentLength(2L * config.bodyCapBytes()))
        .withTimeouts(base.getTimeouts().withRequestTimeout(finite).withIdleTimeout(finite));
  }

  /** Bound on the read-only probe: a mount in a fresh namespace takes milliseconds. */
  static final Duration PROBE_BOUND = Duration.ofSeconds(10);

  /** Whether the mount prelude works here: fail closed on anything but a clean exit 0. */
  private static CallGate.ReadOnly probeReadOnly(ToolWorkspace workspace, boolean asRoot) {
    return probe(
        ToolCommand.readOnlyProbe(workspace.workdir(), asRoot), workspace.workdir(), PROBE_BOUND);
  }

  /**
   * Runs {@code argv} (a group leader through {@code setsid}) with no input and its output
   * discarded, so a child that keeps the output open cannot hold the wait past its bound. {@code
   * ENFORCED} on exit 0 within {@code bound}; anything else fails closed. Either way its group is
   * then killed through the one process-group utility, with its wait: nothing it started outlives
   * the probe.
   */
  static CallGate.ReadOnly probe(List<String> argv, Path workdir, Duration bound) {
    Process probe;
    try {
      probe =
          new ProcessBuilder(argv)
              .directory(workdir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
              .start();
    } catch (IOException e) {
      return CallGate.ReadOnly.UNENFORCEABLE;
    }
    try {
      boolean exited = probe.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS);
      return exited && probe.exitValue() == 0
          ? CallGate.ReadOnly.ENFORCED
          : CallGate.ReadOnly.UNENFORCEABLE;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CallGate.ReadOnly.UNENFORCEABLE;
    } finally {
      ProcessGroup.killAll(probe.pid(), probe.toHandle());
    }
  }

  private static boolean runningAsRoot() {
    try {
      return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  /** 32 random bytes, hex: unguessable, and safe in a header and a command line. */
  private static String newToken() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /**
   * The pool, except that a task arriving after {@link #stop()} shut it down (a kill or a pump of a
   * tool that died just then) still runs, on a thread of its own: a process's last steps must never
   * be dropped, or its call would never finish.
   */
  private static Executor lateTolerant(ExecutorService pool) {
    return task -> {
      try {
        pool.execute(task);
      } catch (RejectedExecutionException afterStop) {
        Thread late = new Thread(task, "capsule-bridge-io-late");
        late.setDaemon(true);
        late.start();
      }
    };
  }

  private static ThreadFactory daemonThreads() {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, "capsule-bridge-io-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** Shields the bridge from a listener that throws. */
  private record SafeListener(Listener delegate) implements Listener {
    @Override
    public void onActivity() {
      try {
        delegate.onActivity();
      } catch (RuntimeException e) {
        // the listener's contract forbids throwing; a bug there must not break a tool call
      }
    }

    @Override
    public void onCall(ToolCallEvent event) {
      try {
        delegate.onCall(event);
      } catch (RuntimeException e) {
        // as above
      }
    }
  }
}
