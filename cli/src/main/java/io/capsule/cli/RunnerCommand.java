package io.capsule.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.tls.ClientTls;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.HubEndpoints;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apache.pekko.actor.typed.ActorSystem;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code capsule runner}: dials out to a hub, runs the tasks it assigns (bounded), reports their
 * progress and reports, obeys cancels, and survives hub restarts and network cuts (the protocol
 * client resumes and replays). Runs until SIGINT/SIGTERM.
 */
@Command(
    name = "runner",
    mixinStandardHelpOptions = true,
    description = "Connect to a hub and run the capsule tasks it assigns.")
final class RunnerCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--hub",
      required = true,
      description =
          "ws://HOST:PORT/v1/runner (wss:// for a hub with TLS), or several nodes of one hub cluster separated by commas:"
              + " on a disconnect the runner dials the next one (round-robin) and resumes there")
  String hub;

  @Option(
      names = "--token-file",
      required = true,
      description = "the runner token (re-read on every reconnect, so it can be rotated)")
  Path tokenFile;

  @Option(
      names = "--capsules",
      required = true,
      description =
          "the folder whose sub-folders are the capsules (backend capsule:NAME); each one with a"
              + " murmur.yaml is announced to the hub at start, so it is given only those tasks")
  Path capsules;

  @Option(
      names = "--max-runs",
      defaultValue = "4",
      description =
          "runs at once, 1-4096, announced to the hub as its slots; more assignments wait"
              + " (default ${DEFAULT-VALUE})")
  int maxRuns;

  @Option(names = "--project", description = "hello.project_id (default: the token's project)")
  String project;

  @Option(
      names = "--metrics",
      description = "HOST:PORT to serve Prometheus metrics on, at /metrics (default: off)")
  String metrics;

  @Option(
      names = "--ca-file",
      paramLabel = "PEM",
      description =
          "trust the CAs in this PEM file for a wss:// hub, besides the system's (a hub whose"
              + " certificate comes from a private CA)")
  Path caFile;

  @CommandLine.Mixin LogOptions logs = new LogOptions();

  @Override
  public Integer call() throws InterruptedException {
    logs.apply(); // steps at INFO, text or JSON
    if (maxRuns < 1 || maxRuns > Capabilities.MAX_SLOTS) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--max-runs must be 1.." + Capabilities.MAX_SLOTS);
    }
    try {
      HubEndpoints.parse(hub);
    } catch (IllegalArgumentException e) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CLI_001, "--hub: " + e.getMessage())
              .withHint("e.g. --hub ws://10.0.0.1:8600/v1/runner,ws://10.0.0.2:8600/v1/runner"));
    }
    if (!Files.isDirectory(capsules)) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CLI_001, "--capsules " + capsules + " is not a directory")
              .withHint("pass the folder holding one sub-folder per capsule"));
    }
    // Read now: an unreadable CA file refuses the start (E-TLS-001), not every dial.
    ClientTls trust = ClientTls.trusting(Optional.ofNullable(caFile));
    TokenSource tokens = TokenSource.file(tokenFile);
    String projectId = project != null ? project : projectOf(tokens.token());
    CapsuleSettings settings = CapsuleSettings.load();
    PrintWriter out = spec.commandLine().getOut();
    ActorSystem<Void> system = CliSystem.create("capsule-runner", settings);
    if (metrics != null) { // before the first run, so every run is counted
      say(out, "metrics on " + MetricsEndpoint.serveOrStop(system, metrics));
    }
    RunnerNode node =
        RunnerNode.start(
            system,
            settings,
            hub,
            projectId,
            tokens,
            capsules,
            maxRuns,
            // Which node, when connected: with several --hub URLs a person wants to know.
            s -> say(out, s.describe() + s.hubUrl().map(u -> " to " + u).orElse("")),
            n -> say(out, n.describe()),
            trust);
    synchronized (out) {
      out.println(
          "runner for project " + projectId + " → " + hub + " (capsules in " + capsules + ")");
      out.flush();
    }
    // A capsule whose name differs from its folder is found by folder only: say so now, not when
    // a task for capsule:NAME is blocked.
    FolderNames.mismatches(capsules).forEach(d -> say(out, d.code().id() + " " + d.message()));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  node.close();
                  system.terminate();
                  stopped.countDown();
                },
                "capsule-runner-stop"));
    stopped.await();
    return ExitCodes.DONE;
  }

  /** One step line, with the catalog's hint under it when it names an {@code E-} code. */
  private static void say(PrintWriter out, String line) {
    synchronized (out) {
      out.println(Hints.withHints("runner: " + line));
      out.flush();
    }
  }

  /** The token's {@code project_id} claim, read without verifying (only the hub can). */
  static String projectOf(String token) {
    String[] parts = token.split("\\.");
    try {
      JsonNode claims =
          JSON.readTree(
              new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8));
      String p = claims.path("project_id").asText("");
      if (!p.isEmpty()) {
        return p;
      }
    } catch (Exception e) {
      // fall through to the refusal below
    }
    throw new DiagnosticException(
        Diagnostic.of(Code.E_PRO_007, "the runner token carries no readable project_id")
            .withHint("issue a token with `capsule hub token --project P`, or pass --project"));
  }
}
