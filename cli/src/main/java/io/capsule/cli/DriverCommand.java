package io.capsule.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.driver.wasi.WasiInterfaces;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code capsule driver describe|replay}: tools for driver authors, on any component. */
@Command(
    name = "driver",
    mixinStandardHelpOptions = true,
    description = "Inspect a driver component and replay recorded harness output through it.",
    subcommands = {DriverCommand.Describe.class, DriverCommand.Replay.class})
final class DriverCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** The values {@code --engine} takes; the same names {@code capsule.driver.engine} takes. */
  static final List<String> ENGINES = List.of("wasmtime", "chicory");

  /** Loads a driver reference with the engine chosen on the command line or in settings. */
  static DriverLoader loader(Optional<String> engine) {
    // Checked here, not by the settings reader, whose message would blame application.conf for
    // a value the person typed on the command line.
    if (engine.isPresent() && !ENGINES.contains(engine.get())) {
      throw new DiagnosticException(
          Diagnostic.of(Code.E_CLI_001, "--engine '" + engine.get() + "' is not an engine")
              .withHint("use --engine wasmtime or --engine chicory"));
    }
    CapsuleSettings settings = CapsuleSettings.load();
    return engine.isEmpty()
        ? RuntimeWiring.driverLoader(settings)
        : RuntimeWiring.driverLoader(
            settings.withOverrides(java.util.Map.of("capsule.driver.engine", engine.get())));
  }

  @Command(
      name = "describe",
      mixinStandardHelpOptions = true,
      description = "Load a driver (all load checks) and print its description.")
  static final class Describe implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DRIVER", description = "driver.wasm or builtin:NAME")
    String driver;

    @Option(
        names = "--engine",
        paramLabel = "ENGINE",
        description = "wasmtime or chicory (default: the setting capsule.driver.engine)")
    Optional<String> engine;

    @Option(names = "--json", description = "print the description as JSON")
    boolean json;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      try (DriverLoader loader = loader(engine)) {
        LoadedDriver loaded = loader.load(driver);
        Description d = loaded.description();
        if (json) {
          out.println(DescriptionJson.toJson(d, loaded));
        } else {
          out.println("driver          " + loaded.origin() + " (sha256 " + loaded.sha256() + ")");
          out.println("engine          " + loaded.engineName());
          out.println("harness         " + d.harness());
          out.println("binary          " + d.binary() + " " + String.join(" ", d.versionArgs()));
          out.println("tested versions " + String.join(", ", d.testedVersions()));
          out.println("interrupt       " + d.interrupt().witName());
          out.println("required env    " + String.join(", ", d.requiredEnv()));
          out.println("streams text    " + d.streamsText());
          out.println("reports usage   " + d.reportsUsage());
          out.println("login check     " + loginCheck(d.loginCheck()));
          d.harnessNeeds()
              .paths()
              .forEach(
                  p -> out.println("needs path      " + p.path() + " " + p.access().witName()));
          d.harnessNeeds().hosts().forEach(h -> out.println("needs host      " + h));
          List<String> imports = loaded.binary().imports();
          if (imports.isEmpty()) {
            out.println("imports         none");
          }
          imports.forEach(
              i ->
                  out.println(
                      "import          " + i + " (grant: " + WasiInterfaces.grant(i) + ")"));
          loaded.describeNotes().forEach(n -> out.println("describe note   " + n));
        }
        out.flush();
        return ExitCodes.DONE;
      }
    }

    private static String loginCheck(LoginCheck check) {
      if (check instanceof LoginCheck.Command c) {
        return "command: " + String.join(" ", c.args());
      }
      return "unavailable: " + ((LoginCheck.Unavailable) check).reason();
    }
  }

  @Command(
      name = "replay",
      mixinStandardHelpOptions = true,
      description =
          "Feed a recorded harness stdout (one line per line) through a driver's parse and print"
              + " the events, the terminal outcome and any notes.")
  static final class Replay implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DRIVER", description = "driver.wasm or builtin:NAME")
    String driver;

    @Parameters(index = "1", paramLabel = "TRANSCRIPT", description = "recorded stdout (JSONL)")
    Path transcript;

    @Option(
        names = "--batch",
        defaultValue = "256",
        description = "lines per parse call (default ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--json", description = "one canonical event JSON object per line")
    boolean json;

    @Option(
        names = "--engine",
        paramLabel = "ENGINE",
        description = "wasmtime or chicory (default: the setting capsule.driver.engine)")
    Optional<String> engine;

    @Option(names = "--task", defaultValue = "replay", description = "task text given to launch")
    String task;

    @Option(
        names = "--launch-request",
        paramLabel = "FILE",
        description =
            "the launch request as JSON (WIT field names); a driver may rely in parse on what"
                + " launch was given, e.g. the bridge's server name")
    Path launchRequest;

    @Override
    public Integer call() throws IOException {
      if (batch < 1) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--batch must be at least 1");
      }
      List<String> lines = readLines(transcript);
      PrintWriter out = spec.commandLine().getOut();
      try (DriverLoader loader = loader(engine);
          ProcessDriver instance = loader.load(driver).newInstance()) {
        LaunchResult launched =
            instance.launch(
                launchRequest == null
                    ? replayRequest(task)
                    : LaunchRequestJson.read(launchRequest));
        if (launched instanceof LaunchResult.Refused r) {
          throw new DiagnosticException(
              Diagnostic.of(Code.E_RUN_034, "the driver failed in launch: " + r.message()));
        }
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < lines.size(); i += batch) {
          events.addAll(instance.parse(lines.subList(i, Math.min(lines.size(), i + batch))));
        }
        Optional<Event> terminal = events.stream().filter(Event::isTerminal).findFirst();
        boolean classified = terminal.isEmpty();
        Event outcome =
            terminal.orElseGet(
                () ->
                    instance.classifyExit(
                        new ExitStatus(Optional.of(0), Optional.empty(), "", false, false)));
        for (Event e : events) {
          out.println(json ? EventJson.compact(EventJson.toJson(e)) : EventLines.human(e));
        }
        if (json) {
          if (classified) {
            ObjectNode line = EventJson.toJson(outcome);
            line.put("classified", true);
            out.println(EventJson.compact(line));
          }
        } else {
          long notes = events.stream().filter(e -> e instanceof Event.Note).count();
          long terminals = events.stream().filter(Event::isTerminal).count();
          out.println("--");
          out.println(
              "outcome: "
                  + EventLines.human(outcome)
                  + (classified ? "  (no terminal event: classify-exit with code 0)" : ""));
          out.println(
              events.size()
                  + " events from "
                  + lines.size()
                  + " lines, "
                  + terminals
                  + " terminal, "
                  + notes
                  + " notes");
        }
        out.flush();
        return outcome instanceof Event.TurnEnd ? ExitCodes.DONE : ExitCodes.TASK_FAILED;
      }
    }

    static LaunchRequest replayRequest(String task) {
      return new LaunchRequest(
          Optional.empty(),
          "",
          Optional.empty(),
          Optional.empty(),
          new Session(UUID.randomUUID().toString(), SessionMode.NEW),
          Optional.empty(),
          task);
    }

    /** Lines as the runtime frames them: split on \n, one trailing \r dropped, tail dropped. */
    static List<String> readLines(Path file) throws IOException {
      String text;
      try {
        text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new DiagnosticException(
            Diagnostic.of(Code.E_CLI_001, "cannot read the transcript " + file + ": " + e)
                .withHint("pass a readable file of recorded harness stdout"),
            e);
      }
      List<String> lines = new ArrayList<>();
      int start = 0;
      for (int nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        String line = text.substring(start, nl);
        lines.add(line.endsWith("\r") ? line.substring(0, line.length() - 1) : line);
        start = nl + 1;
      }
      return lines;
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The description as JSON with WIT field names, for machines. */
  static final class DescriptionJson {
    private DescriptionJson() {}

    static String toJson(Description d, LoadedDriver loaded) {
      ObjectNode n = JSON.createObjectNode();
      n.put("driver", loaded.origin());
      n.put("sha256", loaded.sha256());
      n.put("engine", loaded.engineName());
      n.put("harness", d.harness());
      n.put("binary", d.binary());
      n.putPOJO("version-args", d.versionArgs());
      n.putPOJO("tested-versions", d.testedVersions());
      n.put("interrupt", d.interrupt().witName());
      n.putPOJO("required-env", d.requiredEnv());
      n.put("streams-text", d.streamsText());
      n.put("reports-usage", d.reportsUsage());
      ObjectNode login = n.putObject("login-check");
      if (d.loginCheck() instanceof LoginCheck.Command c) {
        login.putPOJO("command", c.args());
      } else {
        login.put("unavailable", ((LoginCheck.Unavailable) d.loginCheck()).reason());
      }
      ObjectNode needs = n.putObject("harness-needs");
      var paths = needs.putArray("paths");
      d.harnessNeeds()
          .paths()
          .forEach(
              p -> paths.addObject().put("path", p.path()).put("access", p.access().witName()));
      needs.putPOJO("hosts", d.harnessNeeds().hosts());
      try {
        return JSON.writeValueAsString(n);
      } catch (IOException e) {
        throw new IllegalStateException("a tree always serializes", e);
      }
    }
  }
}
