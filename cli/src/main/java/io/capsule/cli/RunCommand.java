package io.capsule.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestLoader;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.driver.load.DriverLoader;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunEventJson;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.javadsl.Sink;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code capsule run}: one task in an embedded runtime with no hub, shown live. Ctrl-C cancels the
 * run the graceful way (interrupt, grace, kill) and still prints the outcome.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run one task with a capsule and show what it does, live.")
final class RunCommand implements java.util.concurrent.Callable<Integer> {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "CAPSULE_DIR", description = "the capsule folder")
  Path capsuleDir;

  static final class TaskSource {
    @Option(names = "--task", paramLabel = "TEXT", description = "the task text")
    String text;

    @Option(names = "--task-file", paramLabel = "FILE", description = "read the task from a file")
    Path file;
  }

  @ArgGroup(multiplicity = "1")
  TaskSource task;

  @Option(names = "--json", description = "print every run event as one JSON object per line")
  boolean json;

  @Option(
      names = "--trace-dir",
      paramLabel = "DIR",
      description =
          "where the run directory with trace.jsonl goes (default: capsule.run.work-root,"
              + " ~/.local/state/capsule/runs)")
  Path traceDir;

  @Option(names = "--model", description = "use this model instead of inference.model")
  String model;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    String taskText = taskText();
    // Validate up front so every manifest error is shown at once, with exit code 2.
    Manifest manifest = ManifestLoader.load(capsuleDir);
    CapsuleSettings settings = CapsuleSettings.load();
    if (traceDir != null) {
      settings =
          settings.withOverrides(
              Map.of(
                  "capsule.run.work-root",
                  traceDir.toAbsolutePath().toString(),
                  // A folder the user named holds their traces: retention never prunes it.
                  "capsule.run.keep.count",
                  String.valueOf(Integer.MAX_VALUE),
                  "capsule.run.keep.age",
                  "36500d"));
    }
    String taskId = "run-" + UUID.randomUUID().toString().substring(0, 8);
    RunRequest request =
        RunRequest.of(taskId, new CapsuleRef.Folder(manifest.capsuleDir().toString()), taskText);
    if (model != null && !model.isBlank()) {
      request =
          new RunRequest(
              request.taskId(),
              request.capsule(),
              request.task(),
              request.conversation(),
              java.util.Optional.of(model),
              request.maxTurns(),
              request.maxTokens(),
              request.workdir());
    }

    ActorSystem<Void> system = CliSystem.create("capsule-run", settings);
    try (DriverLoader loader = RuntimeWiring.driverLoader(settings)) {
      EmbeddedRuntime runtime =
          EmbeddedRuntime.create(
              system, RuntimeWiring.limits(settings), RuntimeWiring.wasm(loader));
      LiveRenderer renderer =
          new LiveRenderer(
              out,
              !json && Terminal.colors(),
              Optional.ofNullable(traceDir).map(d -> d.toAbsolutePath().toString()));
      // The manifest's warnings (W-SEC-024) are not printed here: the run reports each one as a
      // warning event, which both views show.
      if (!json) {
        renderer.header(manifest.name() + " " + manifest.version(), taskId);
      }
      AtomicBoolean usageReported = new AtomicBoolean();
      AtomicReference<RunHandle> handle = new AtomicReference<>();
      // Completes once the last event (the outcome) has been printed: the stream's thread prints
      // it, possibly after the outcome future completed, so both exits wait for this.
      CompletableFuture<Void> printed = new CompletableFuture<>();
      CtrlC ctrlC =
          CtrlC.install(
              () -> {
                RunHandle h = handle.get();
                if (h != null) {
                  h.cancel("canceled by the user (Ctrl-C)");
                }
              },
              printed,
              settings.run().interruptGrace().plus(Duration.ofSeconds(15)));
      try {
        RunHandle h =
            runtime
                .source(request)
                .to(
                    Sink.foreach(
                        e -> {
                          synchronized (out) {
                            if (e instanceof RunEvent.UsageUpdated) {
                              usageReported.set(true);
                            }
                            if (json) {
                              out.println(jsonLine(e, usageReported.get()));
                              out.flush();
                            } else {
                              renderer.on(e);
                            }
                          }
                          if (e instanceof RunEvent.Finished) {
                            printed.complete(null);
                          }
                        }))
                .run(system);
        handle.set(h);
        RunOutcome result = h.outcome().toCompletableFuture().join();
        try {
          printed.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
          // The outcome is known; a stalled printer must not change the exit code.
        }
        if (traceDir != null) {
          tellWhereTheTraceIs(traceDir, taskId);
        }
        return exitCode(result);
      } finally {
        ctrlC.uninstall();
      }
    } finally {
      system.terminate();
      try {
        system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        // The process is ending; a slow shutdown must not hide the run's exit code.
      }
    }
  }

  /**
   * An event's JSON line. A usage member the harness never reported is already {@code null} there;
   * a run whose harness reported no usage at all gets {@code "usage": null} as a whole, since zeros
   * there would claim the run was free.
   */
  static String jsonLine(RunEvent e, boolean usageReported) {
    if (e instanceof RunEvent.Finished && !usageReported) {
      ObjectNode node = RunEventJson.toJson(e);
      node.putNull("usage");
      return node.toString();
    }
    return RunEventJson.line(e);
  }

  /**
   * With {@code --trace-dir}, the run's own directory (named after the task id, under it): on
   * stdout after the summary, or on stderr with {@code --json} so the JSON lines stay pure.
   */
  private void tellWhereTheTraceIs(Path root, String taskId) {
    Optional<Path> runDir;
    try (Stream<Path> dirs = Files.list(root)) {
      runDir = dirs.filter(d -> d.getFileName().toString().startsWith(taskId + "-")).findFirst();
    } catch (IOException e) {
      runDir = Optional.empty();
    }
    String where =
        runDir
            .map(d -> "trace: " + d.toAbsolutePath().resolve("trace.jsonl"))
            .orElse("trace: no run directory under " + root.toAbsolutePath());
    PrintWriter to = json ? spec.commandLine().getErr() : spec.commandLine().getOut();
    to.println(where);
    to.flush();
  }

  private String taskText() {
    if (task.text != null) {
      return task.text;
    }
    try {
      return Files.readString(task.file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CLI_001, "cannot read the task file " + task.file + ": " + e)
              .withHint("pass --task TEXT or a readable --task-file"),
          e);
    }
  }

  /** The documented exit codes: done 0, failed/canceled 1, blocked by its cause. */
  static int exitCode(RunOutcome o) {
    if (o.status() == RunStatus.DONE) {
      return ExitCodes.DONE;
    }
    if (o.status() == RunStatus.BLOCKED) {
      return o.code().flatMap(Code::byId).map(CapsuleMain::exitCodeFor).orElse(ExitCodes.USAGE);
    }
    return ExitCodes.TASK_FAILED;
  }
}
