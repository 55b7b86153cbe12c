package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The first hour's rough edges on the command line itself (issue #18): the command's own help,
 * every option described, and the right code and hint for a wrong driver, engine or transcript.
 */
class FirstHourHelpTest {
  @TempDir Path tmp;

  @Test
  void helpIsACommandThatListsTheCommandsAndHelpsWithEach() {
    Cli.Result all = Cli.run("help");
    assertEquals(0, all.exit(), all.err());
    for (String command : List.of("run", "doctor", "driver", "hub", "runner")) {
      assertTrue(all.out().contains("  " + command + " "), command + " in\n" + all.out());
    }
    Cli.Result run = Cli.run("help", "run");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().contains("--task-file"), run.out());
  }

  @Test
  void everyOptionAndArgumentOfEveryCommandIsDescribed() {
    List<String> bare = new ArrayList<>();
    collectUndescribed(CapsuleMain.commandLine().getCommandSpec(), bare);
    assertTrue(bare.isEmpty(), "undescribed: " + bare);
  }

  @Test
  void anUnknownBuiltInDriverIsMissingAndTheBuiltInsAreListed() {
    Cli.Result r = Cli.run("driver", "describe", "builtin:nope");
    assertEquals(ExitCodes.HARNESS_UNAVAILABLE, r.exit());
    assertTrue(r.err().startsWith("E-RUN-006 there is no built-in driver 'nope'"), r.err());
    for (String name : List.of("claude-code", "codex", "gemini", "jsonl")) {
      assertTrue(r.err().contains("builtin:" + name), r.err());
    }
    assertFalse(r.err().contains("sha256"), "no unrelated hint: " + r.err());
  }

  @Test
  void anUnknownEngineBlamesTheOptionNotApplicationConf() {
    Cli.Result r = Cli.run("driver", "describe", "builtin:jsonl", "--engine", "foo");
    assertEquals(ExitCodes.USAGE, r.exit());
    assertTrue(r.err().startsWith("E-CLI-001 --engine 'foo' is not an engine"), r.err());
    assertTrue(r.err().contains("--engine wasmtime or --engine chicory"), r.err());
    assertFalse(r.err().contains("application.conf"), r.err());
    assertFalse(r.err().contains("hardcoded"), r.err());
  }

  @Test
  void aMissingTranscriptIsACommandLineErrorNotASettingsError() {
    Path missing = tmp.resolve("no-such-transcript.jsonl");
    Cli.Result r = Cli.run("driver", "replay", "builtin:jsonl", missing.toString());
    assertEquals(ExitCodes.USAGE, r.exit());
    assertTrue(r.err().startsWith("E-CLI-001 cannot read the transcript " + missing), r.err());
  }

  private static void collectUndescribed(CommandSpec spec, List<String> bare) {
    for (ArgSpec arg : spec.args()) {
      boolean described =
          arg.description().length > 0 && !String.join("", arg.description()).isBlank();
      if (!described) {
        bare.add(spec.qualifiedName() + " " + arg.paramLabel() + describe(arg));
      }
    }
    for (CommandLine sub : spec.subcommands().values()) {
      collectUndescribed(sub.getCommandSpec(), bare);
    }
  }

  private static String describe(ArgSpec arg) {
    return arg.isOption()
        ? " (" + String.join("/", ((CommandLine.Model.OptionSpec) arg).names()) + ")"
        : "";
  }
}
