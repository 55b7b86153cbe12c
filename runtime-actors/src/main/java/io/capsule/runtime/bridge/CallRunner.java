package io.capsule.runtime.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.runtime.bridge.ToolCallEvent.CallStatus;
import io.capsule.runtime.harness.contain.RunSandbox;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.Scheduler;
import scala.concurrent.ExecutionContext;

/**
 * Runs {@code tools/call}s: the gate, the in-flight limit, the process, the listener's events, and
 * the MCP result. Thread-safe: called concurrently from HTTP stream threads; its state is a few
 * atomics and a concurrent set of running processes.
 */
final class CallRunner {

  private final CallGate gate;
  private final BridgeConfig config;
  private final ToolWorkspace workspace;
  private final boolean readOnlyMount;
  private final boolean asRoot;
  private final Executor io;
  private final Scheduler scheduler;
  private final ExecutionContext ec;
  private final ToolBridge.Listener listener;

  /**
   * Bound on a call's wait for the run's sandbox: the run passes it on as soon as the harness has
   * spawned, so this only ends a wait on a run whose harness never started.
   */
  static final Duration SANDBOX_WAIT = Duration.ofSeconds(10);

  /** Where calls run: a sandbox of the run, or empty for host processes (containment off). */
  private final CompletableFuture<Optional<RunSandbox>> sandbox;

  private final AtomicBoolean ending = new AtomicBoolean();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicLong sequence = new AtomicLong();
  private final Map<ToolProcess, CompletableFuture<ObjectNode>> running = new ConcurrentHashMap<>();

  CallRunner(
      CallGate gate,
      BridgeConfig config,
      ToolWorkspace workspace,
      boolean readOnlyMount,
      boolean asRoot,
      boolean awaitsSandbox,
      Executor io,
      Scheduler scheduler,
      ExecutionContext ec,
      ToolBridge.Listener listener) {
    this.gate = gate;
    this.config = config;
    this.workspace = workspace;
    this.readOnlyMount = readOnlyMount;
    this.asRoot = asRoot;
    this.sandbox =
        awaitsSandbox
            ? new CompletableFuture<>()
            : CompletableFuture.completedFuture(Optional.empty());
    this.io = io;
    this.scheduler = scheduler;
    this.ec = ec;
    this.listener = listener;
  }

  /**
   * The run's sandbox, once the harness has spawned: every call from now on runs in a new sandbox
   * of it (empty: the harness runs uncontained, and so do the tools). Only the first one counts.
   */
  void contain(Optional<RunSandbox> runSandbox) {
    sandbox.complete(runSandbox);
  }

  void beginEnding() {
    ending.set(true);
  }

  boolean isEnding() {
    return ending.get();
  }

  int inFlight() {
    return inFlight.get();
  }

  /**
   * Refuses new calls and kills every running tool's group; their calls finish {@link
   * CallStatus#STOPPED}. The stage completes when each of them has reported {@code Finished}.
   */
  CompletableFuture<Void> stopAll() {
    ending.set(true);
    running.keySet().forEach(p -> p.kill(ToolProcess.End.STOPPED));
    return CompletableFuture.allOf(running.values().toArray(CompletableFuture<?>[]::new));
  }

  /**
   * Runs one call and completes with its {@code tools/call} result (never exceptionally: every
   * failure is an {@code isError} result). A process started here is registered with {@code
   * connection}, which kills it if the connection closes first.
   */
  CompletionStage<ObjectNode> call(
      String rpcId, String toolName, JsonNode arguments, Connection connection) {
    long startNanos = System.nanoTime();
    String callId = "call-" + sequence.incrementAndGet();
    String tool = CallGate.shorten(toolName);
    int inputBytes = arguments == null ? 0 : JsonRpc.bytes(arguments).length;
    Call call = new Call(callId, rpcId, tool, inputBytes, startNanos);

    CallGate.Verdict verdict = gate.check(toolName, arguments, ending.get());
    if (verdict instanceof CallGate.Refused refused) {
      return CompletableFuture.completedFuture(refuse(call, refused.diagnostic()));
    }
    CallGate.Admitted admitted = (CallGate.Admitted) verdict;
    if (inFlight.incrementAndGet() > config.maxInFlight()) {
      inFlight.decrementAndGet();
      return CompletableFuture.completedFuture(
          refuse(
              call,
              Diagnostic.of(
                  Code.E_TOOL_005,
                  config.maxInFlight()
                      + " tool calls are already running; '"
                      + tool
                      + "' was not started")));
    }
    if (sandbox.isDone()) {
      return start(call, admitted, sandbox.join(), connection);
    }
    // The harness has just spawned and the run has not passed its sandbox on yet: milliseconds.
    return sandbox
        .copy()
        .orTimeout(SANDBOX_WAIT.toMillis(), TimeUnit.MILLISECONDS)
        .handle((sb, failure) -> failure == null ? sb : null)
        .thenCompose(
            sb -> {
              if (sb == null) {
                inFlight.decrementAndGet();
                return CompletableFuture.completedFuture(
                    notStarted(call, "the run's sandbox was not ready"));
              }
              return start(call, admitted, sb, connection);
            });
  }

  /**
   * Starts the admitted call: in a new sandbox of the run when {@code sb} is present (grants,
   * read-only binds and egress exactly as the harness's), else as a host process.
   */
  private CompletionStage<ObjectNode> start(
      Call call, CallGate.Admitted admitted, Optional<RunSandbox> sb, Connection connection) {
    List<String> command = new ArrayList<>();
    command.add(admitted.tool().binary().toString());
    command.addAll(admitted.args());
    ToolProcess process;
    try {
      if (!Files.isExecutable(admitted.tool().binary())) {
        // setsid would start and then fail to exec it (exit 127): say what really happened
        throw new IOException(admitted.tool().binary() + " is no longer an executable file");
      }
      List<String> argv;
      Map<String, String> env;
      if (sb.isPresent()) {
        argv = sb.get().argv(command, workspace.env());
        env = new java.util.HashMap<>(workspace.env());
        env.putAll(sb.get().proxyEnv());
      } else {
        argv =
            ToolCommand.argv(
                admitted.tool().binary(),
                admitted.args(),
                readOnlyMount ? Optional.of(workspace.workdir()) : Optional.empty(),
                asRoot);
        env = workspace.env();
      }
      if (ending.get()) {
        throw new IOException("the run is ending");
      }
      process =
          ToolProcess.start(
              argv,
              workspace.workdir(),
              env,
              sb.isPresent(),
              admitted.stdin(),
              config.outputCapBytes(),
              config.callTimeout(),
              io,
              scheduler,
              ec);
    } catch (IOException e) {
      inFlight.decrementAndGet();
      return CompletableFuture.completedFuture(
          notStarted(call, "'" + call.tool + "' could not be started: " + e.getMessage()));
    }
    CompletableFuture<ObjectNode> done = new CompletableFuture<>();
    running.put(process, done);
    listener.onCall(new ToolCallEvent.Started(call.id, call.rpcId, call.tool, call.inputBytes));
    if (ending.get()) {
      // stop() raced with this call between the gate and registration: it must not outlive it
      process.kill(ToolProcess.End.STOPPED);
    }
    connection.attach(process);
    process
        .outcome()
        .thenApply(
            outcome -> {
              connection.detach(process);
              inFlight.decrementAndGet();
              // A tool past the run's memory or process limit ends the run (E-RUN-047/048):
              // the kernel's counters say so, whatever the tool's own exit says.
              Optional<Diagnostic> breach = sb.flatMap(RunSandbox::breach);
              return breach.isPresent() ? passedLimit(call, breach.get()) : complete(call, outcome);
            })
        .whenComplete(
            (result, failure) -> {
              running.remove(process);
              if (failure != null) {
                done.completeExceptionally(failure);
              } else {
                done.complete(result);
              }
            });
    return done;
  }

  private ObjectNode complete(Call call, ToolProcess.Outcome outcome) {
    List<String> texts = new ArrayList<>();
    if (!outcome.stdout().isEmpty()) {
      texts.add(outcome.stdout());
    }
    if (!outcome.stderr().isEmpty()) {
      texts.add("stderr:\n" + outcome.stderr());
    }
    if (outcome.truncated()) {
      texts.add(
          "[output cut at "
              + config.outputCapBytes()
              + " bytes (stdout and stderr together); the rest was dropped]");
    }
    Optional<Diagnostic> diagnostic = Optional.empty();
    CallStatus status;
    switch (outcome.end()) {
      case EXITED -> {
        int code = outcome.exitCode().orElse(-1);
        if (code == 0) {
          status = CallStatus.OK;
        } else if (readOnlyMount
            && code == ToolCommand.SETUP_FAILED
            && outcome.stderr().contains(ToolCommand.SETUP_FAILED_MESSAGE)) {
          status = CallStatus.FAILED;
          diagnostic =
              Optional.of(
                  Diagnostic.of(
                      Code.E_TOOL_006,
                      "the workdir could not be mounted read-only; '"
                          + call.tool
                          + "' did not run"));
        } else {
          status = CallStatus.TOOL_ERROR;
          texts.add("exit code " + code);
        }
      }
      case TIMED_OUT -> {
        status = CallStatus.TIMED_OUT;
        diagnostic =
            Optional.of(
                Diagnostic.of(
                    Code.E_TOOL_007,
                    "'"
                        + call.tool
                        + "' ran past "
                        + config.callTimeout().toMillis()
                        + " ms and its process group was killed"));
      }
      case ABANDONED -> {
        status = CallStatus.ABANDONED;
        diagnostic =
            Optional.of(
                Diagnostic.of(
                    Code.E_TOOL_008,
                    "the harness closed the connection while '"
                        + call.tool
                        + "' ran; its process group was killed"));
      }
      case STOPPED -> {
        status = CallStatus.STOPPED;
        diagnostic =
            Optional.of(
                Diagnostic.of(
                    Code.E_TOOL_008,
                    "the run ended while '" + call.tool + "' ran; its process group was killed"));
      }
      default -> throw new IllegalStateException("unknown end " + outcome.end());
    }
    diagnostic.ifPresent(d -> texts.add(d.render()));
    if (texts.isEmpty()) {
      texts.add("(no output)");
    }
    ObjectNode result = McpProtocol.callResult(texts, status != CallStatus.OK);
    Optional<Integer> exit =
        outcome.end() == ToolProcess.End.EXITED && outcome.exitCode().isPresent()
            ? Optional.of(outcome.exitCode().getAsInt())
            : Optional.empty();
    finish(call, result, status, exit, diagnostic);
    return result;
  }

  /** The call's run passed a limit: the result says so, and its event carries the code. */
  private ObjectNode passedLimit(Call call, Diagnostic breach) {
    ObjectNode result = McpProtocol.callResult(List.of(breach.render()), true);
    finish(call, result, CallStatus.FAILED, Optional.empty(), Optional.of(breach));
    return result;
  }

  /** {@code E-TOOL-009}: the call's process did not start. */
  private ObjectNode notStarted(Call call, String message) {
    Diagnostic failed = Diagnostic.of(Code.E_TOOL_009, message);
    ObjectNode result = McpProtocol.callResult(List.of(failed.render()), true);
    finish(call, result, CallStatus.FAILED, Optional.empty(), Optional.of(failed));
    return result;
  }

  private ObjectNode refuse(Call call, Diagnostic diagnostic) {
    ObjectNode result = McpProtocol.callResult(List.of(diagnostic.render()), true);
    finish(call, result, CallStatus.REFUSED, Optional.empty(), Optional.of(diagnostic));
    return result;
  }

  private void finish(
      Call call,
      ObjectNode result,
      CallStatus status,
      Optional<Integer> exitCode,
      Optional<Diagnostic> diagnostic) {
    int outputBytes = 0;
    for (JsonNode item : result.path("content")) {
      outputBytes += item.path("text").asText().getBytes(StandardCharsets.UTF_8).length;
    }
    listener.onCall(
        new ToolCallEvent.Finished(
            call.id,
            call.rpcId,
            call.tool,
            call.inputBytes,
            outputBytes,
            java.time.Duration.ofNanos(System.nanoTime() - call.startNanos),
            status,
            exitCode,
            diagnostic));
  }

  private record Call(String id, String rpcId, String tool, int inputBytes, long startNanos) {}

  /**
   * The calls running on one HTTP connection. When the connection ends (the client hung up), each
   * call still running is killed as {@link ToolProcess.End#ABANDONED}.
   */
  static final class Connection {
    private final Set<ToolProcess> calls = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    void attach(ToolProcess process) {
      calls.add(process);
      if (closed.get()) {
        process.kill(ToolProcess.End.ABANDONED);
      }
    }

    void detach(ToolProcess process) {
      calls.remove(process);
    }

    void close() {
      closed.set(true);
      calls.forEach(p -> p.kill(ToolProcess.End.ABANDONED));
    }
  }
}
