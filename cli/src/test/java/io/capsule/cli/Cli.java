package io.capsule.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import picocli.CommandLine;

/** Runs the capsule command in-process and captures what it prints. */
final class Cli {
  /** The reactor root, from the cli module's directory (Surefire's working directory). */
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  static final Path HELLO = ROOT.resolve("examples/hello");

  record Result(int exit, String out, String err) {}

  private Cli() {}

  static Result run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine line = CapsuleMain.commandLine();
    line.setOut(new PrintWriter(out, true));
    line.setErr(new PrintWriter(err, true));
    int exit = line.execute(args);
    return new Result(exit, out.toString(), err.toString());
  }
}
