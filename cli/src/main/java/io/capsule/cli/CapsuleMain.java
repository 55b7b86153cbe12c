package io.capsule.cli;

import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code capsule} command: entry point of the runnable jar and of {@code bin/capsule}. */
@Command(
    name = "capsule",
    mixinStandardHelpOptions = true,
    versionProvider = CapsuleMain.Version.class,
    description = "Runs capsules (packaged AI agents) under the Capsule Runtime for Pekko.",
    subcommands = {
      RunCommand.class,
      DoctorCommand.class,
      DriverCommand.class,
      HubCommand.class,
      RunnerCommand.class,
      CommandLine.HelpCommand.class,
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:done",
      "1:the task failed or was canceled (E-RUN-040)",
      "2:usage, manifest or settings error",
      "3:the capsule's grants or its driver were refused",
      "4:the harness is not available (not found, cannot start, not signed in)",
    })
public final class CapsuleMain implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    // Bind SLF4J before the actor system's threads log concurrently, so no call is replayed.
    org.slf4j.LoggerFactory.getILoggerFactory();
    System.exit(execute(args));
  }

  /** Runs the command line and returns the exit code (tests call this instead of main). */
  public static int execute(String... args) {
    return commandLine().execute(args);
  }

  static CommandLine commandLine() {
    CommandLine line = new CommandLine(new CapsuleMain());
    // UTF-8 whatever the locale: a harness's text and the JSON lines must survive a POSIX
    // locale (many CI jobs have no LANG), where the platform charset would turn them into '?'.
    line.setOut(new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true));
    line.setErr(new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true));
    line.setExecutionExceptionHandler(CapsuleMain::onException);
    line.setExitCodeExceptionMapper(t -> ExitCodes.USAGE);
    return line;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** Diagnostics are rendered with their code and hint; anything else is a bug, shown whole. */
  private static int onException(
      Exception e, CommandLine line, CommandLine.ParseResult parseResult) {
    PrintWriter err = line.getErr();
    if (e instanceof DiagnosticException d) {
      for (Diagnostic diagnostic : d.diagnostics()) {
        err.println(diagnostic.render());
      }
      err.flush();
      return exitCodeFor(d.code());
    }
    err.println("capsule: internal error: " + e);
    e.printStackTrace(err);
    err.flush();
    return ExitCodes.TASK_FAILED;
  }

  /** The exit code a refusal with this code maps to (see {@link ExitCodes}). */
  static int exitCodeFor(Code code) {
    String id = code.id();
    if (id.startsWith("E-MAN-") || id.startsWith("E-CFG-") || id.startsWith("E-CLI-")) {
      return ExitCodes.USAGE;
    }
    if (id.startsWith("E-CAP-")
        || code == Code.E_RUN_029
        || code == Code.E_RUN_032
        || code == Code.E_RUN_038) {
      return ExitCodes.REFUSED_GRANTS;
    }
    if (code == Code.E_RUN_006 || code == Code.E_RUN_007) {
      return ExitCodes.HARNESS_UNAVAILABLE;
    }
    return ExitCodes.TASK_FAILED;
  }

  /**
   * {@code capsule --version}: the build's version, the WASM engine it will use (with both engines'
   * library versions) and the Java runtime, which together are what a bug report needs.
   */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      Properties build = buildProperties();
      return new String[] {
        "capsule " + build.getProperty("version", "development"),
        "engine: "
            + configuredEngine()
            + " (wasmtime-java "
            + build.getProperty("wasmtime-java", "?")
            + ", chicory "
            + build.getProperty("chicory", "?")
            + ")",
        "java: "
            + System.getProperty("java.version")
            + " ("
            + System.getProperty("java.vendor")
            + ", "
            + System.getProperty("os.name")
            + " "
            + System.getProperty("os.arch")
            + ")",
      };
    }

    /** The version facts the build wrote (resource filtering); empty when run unbuilt. */
    static Properties buildProperties() {
      Properties p = new Properties();
      try (InputStream in = CapsuleMain.class.getResourceAsStream("build.properties")) {
        if (in != null) {
          p.load(in);
        }
      } catch (IOException e) {
        // Unreadable: the version prints as "development", which is what an unbuilt tree is.
      }
      return p;
    }

    /** The engine setting as configured; --version must print even when settings are invalid. */
    private static String configuredEngine() {
      try {
        return ConfigFactory.load().getString("capsule.driver.engine");
      } catch (RuntimeException e) {
        return "unknown (" + e.getMessage() + ")";
      }
    }
  }
}
