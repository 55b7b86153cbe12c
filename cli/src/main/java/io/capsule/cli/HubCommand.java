package io.capsule.cli;

import io.capsule.cli.hub.ReferenceHub;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.ws.FileHubJournal;
import io.capsule.protocol.ws.HubJournal;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorSystem;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code capsule hub}: a reference hub for one project, and {@code hub token} for its runners. */
@Command(
    name = "hub",
    mixinStandardHelpOptions = true,
    description =
        "Run a reference hub: the runner endpoint /v1/runner and a small task API"
            + " (/v1/tasks, /v1/runners) on one address.",
    subcommands = {HubCommand.Token.class})
final class HubCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--listen",
      defaultValue = "127.0.0.1:0",
      description = "HOST:PORT to listen on (default ${DEFAULT-VALUE}: loopback, a free port)")
  String listen;

  // Not `required`: picocli would then demand them for `hub token` too. Checked in call().
  @Option(names = "--project", description = "the project this hub serves (required)")
  String project;

  @Option(
      names = "--secret-file",
      description = "the shared token secret, at least 32 bytes (required)")
  Path secretFile;

  @Option(
      names = "--state-dir",
      description =
          "keep the hub's journal here (tasks, events, sequence numbers) so a restarted hub"
              + " resumes its runners with nothing lost or repeated; without it the hub forgets"
              + " everything when it stops")
  Path stateDir;

  @Option(
      names = "--fsync",
      description =
          "with --state-dir: flush each journal entry to disk, to survive a machine crash too"
              + " (a killed hub process loses nothing without it)")
  boolean fsync;

  @Override
  public Integer call() throws InterruptedException {
    if (project == null || secretFile == null) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "capsule hub needs --project and --secret-file");
    }
    CapsuleSettings settings = CapsuleSettings.load();
    ProjectTokens tokens =
        new ProjectTokens(Secrets.read(secretFile), settings.protocol().tokenClockSkew());
    int colon = listen.lastIndexOf(':');
    if (colon < 1) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CFG_001, "--listen '" + listen + "' is not HOST:PORT")
              .withHint("e.g. --listen 127.0.0.1:8600"));
    }
    String host = listen.substring(0, colon);
    int port = Integer.parseInt(listen.substring(colon + 1));
    PrintWriter out = spec.commandLine().getOut();
    HubJournal journal =
        stateDir == null ? HubJournal.none() : FileHubJournal.open(stateDir, fsync);
    ActorSystem<Void> system = CliSystem.create("capsule-hub", settings);
    ReferenceHub hub;
    try {
      hub =
          ReferenceHub.start(
                  system, RuntimeWiring.protocol(settings), tokens, project, host, port, journal)
              .toCompletableFuture()
              .join();
    } catch (RuntimeException e) {
      system.terminate();
      journal.close();
      Throwable cause = unwrap(e);
      for (Throwable t = cause; t != null; t = t.getCause()) {
        if (t instanceof java.net.BindException bind) { // Pekko wraps it in its own exception
          throw new DiagnosticException(
              Diagnostic.of(
                      Code.E_CFG_001,
                      "--listen " + listen + " cannot be bound: " + bind.getMessage())
                  .withHint("pick a free port (or 0 for any), or stop what listens there"));
        }
      }
      throw cause instanceof RuntimeException r ? r : e;
    }
    if (journal instanceof FileHubJournal file) {
      out.println(restoredLine(file));
    }
    out.println("hub for project " + project + " listening on " + hub.apiUrl());
    out.println("runners connect to " + hub.runnerUrl());
    out.flush();
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    hub.terminated()
        .whenComplete(
            (d, e) -> {
              if (e != null) { // the hub stopped itself: it could not keep its journal
                failure.set(e);
                stopped.countDown();
              }
            });
    Thread hook =
        new Thread(
            () -> {
              hub.stop().toCompletableFuture().join();
              system.terminate();
              journal.close();
              stopped.countDown();
            },
            "capsule-hub-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    stopped.await();
    Throwable e = failure.get();
    if (e == null) {
      return ExitCodes.DONE;
    }
    Runtime.getRuntime().removeShutdownHook(hook);
    hub.stop().toCompletableFuture().join();
    system.terminate();
    journal.close();
    Throwable cause = unwrap(e);
    if (cause instanceof DiagnosticException d) {
      throw d;
    }
    throw new IllegalStateException("the hub stopped: " + cause, cause);
  }

  /** A failed stage's own failure, without the {@code CompletionException} around it. */
  private static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  private static String restoredLine(FileHubJournal journal) {
    long tasks = journal.recorded().stream().filter(e -> e.frame() instanceof TaskAssign).count();
    String line =
        tasks == 0
            ? "journal " + journal.file() + " (new)"
            : "journal "
                + journal.file()
                + ": restored "
                + tasks
                + (tasks == 1 ? " task" : " tasks")
                + " from "
                + journal.recorded().size()
                + " entries";
    return journal.droppedTornBytes() == 0
        ? line
        : line
            + " (dropped a torn last entry of "
            + journal.droppedTornBytes()
            + " bytes: the hub had not acted on it)";
  }

  @Command(
      name = "token",
      mixinStandardHelpOptions = true,
      description = "Print a runner token for the project (a signed JWT, HS256).")
  static final class Token implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--project",
        required = true,
        description = "the project the token is for (its project_id claim)")
    String project;

    @Option(
        names = "--secret-file",
        required = true,
        description = "the hub's shared token secret, the same file the hub was started with")
    Path secretFile;

    @Option(
        names = "--ttl",
        defaultValue = "10m",
        converter = DurationConverter.class,
        description = "how long the token is valid (default ${DEFAULT-VALUE})")
    Duration ttl;

    @Option(names = "--runner-id", description = "name the runner (several runners per project)")
    Optional<String> runnerId;

    @Override
    public Integer call() {
      ProjectTokens tokens =
          new ProjectTokens(
              Secrets.read(secretFile), CapsuleSettings.load().protocol().tokenClockSkew());
      spec.commandLine().getOut().println(tokens.issue(project, runnerId, ttl));
      spec.commandLine().getOut().flush();
      return ExitCodes.DONE;
    }
  }
}
