package io.capsule.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/** Renders a {@link HarnessScript} as a {@code /bin/sh} script (see there). */
final class ShellScripts {

  private ShellScripts() {}

  static String render(HarnessScript script) {
    StringBuilder sh = new StringBuilder("#!/bin/sh\n# A fake harness written by");
    sh.append(" io.capsule.testkit.HarnessScript.\n");
    HarnessScript.Sigint sigint = script.sigint();
    switch (sigint.mode()) {
      case "ignore" -> sh.append("trap '' INT\n");
      case "exit" -> {
        String body =
            (sigint.line() == null ? "" : "printf '%s\\n' " + quote(sigint.line()) + "; ")
                + "exit "
                + sigint.exitCode();
        sh.append("trap ").append(quote(body)).append(" INT\n");
      }
      default -> {
        // obey: the default disposition
      }
    }
    boolean trapped = sigint.mode().equals("exit");
    for (HarnessScript.Step step : script.steps()) {
      sh.append(step(step, trapped)).append('\n');
    }
    return sh.append("exit ").append(script.exitCode()).append('\n').toString();
  }

  private static String step(HarnessScript.Step step, boolean trapped) {
    if (step instanceof HarnessScript.Out o) {
      return "printf '%s\\n' " + quote(o.text());
    } else if (step instanceof HarnessScript.Bytes b) {
      StringBuilder octal = new StringBuilder("printf '");
      for (byte x : b.bytes()) {
        octal.append(String.format(Locale.ROOT, "\\%03o", x & 0xff));
      }
      return octal.append('\'').toString();
    } else if (step instanceof HarnessScript.Err e) {
      return "printf '%s\\n' " + quote(e.text()) + " >&2";
    } else if (step instanceof HarnessScript.Sleep s) {
      return trapped ? trappedSleep(s.duration()) : sleep(s.duration());
    } else if (step instanceof HarnessScript.Flood f) {
      if (Files.isExecutable(Path.of("/usr/bin/yes"))
          && Files.isExecutable(Path.of("/usr/bin/head"))) {
        return "/usr/bin/yes " + quote(f.text()) + " | /usr/bin/head -n " + f.count();
      }
      return "i=0; while [ $i -lt "
          + f.count()
          + " ]; do printf '%s\\n' "
          + quote(f.text())
          + "; i=$((i+1)); done";
    } else if (step instanceof HarnessScript.ReadLine r) {
      return r.echoPrefix() == null
          ? "read -r line || true"
          : "read -r line || true; printf '%s%s\\n' " + quote(r.echoPrefix()) + " \"$line\"";
    } else {
      return "exec 1>&-";
    }
  }

  /** A foreground sleep, so a SIGINT to the process group reaches it too. */
  private static String sleep(Duration d) {
    return tool("sleep")
        + " "
        + String.format(Locale.ROOT, "%d.%03d", d.toSeconds(), d.toMillisPart());
  }

  /**
   * A sleep in steps of {@value #TRAP_STEP_MS} ms, for a script with a SIGINT trap. The shell runs
   * a trap only after the foreground command ends, and a SIGINT that reaches the shell just before
   * it forks a sleep does not reach that sleep: one long sleep would delay the trap by all of it
   * (seen at load 26, a 60 s linger outlasting the test's 30 s wait). In steps the trap runs within
   * one.
   */
  private static String trappedSleep(Duration d) {
    long steps = d.toMillis() / TRAP_STEP_MS;
    Duration rest = d.minusMillis(steps * TRAP_STEP_MS);
    String loop =
        "i=0; while [ $i -lt "
            + steps
            + " ]; do "
            + sleep(Duration.ofMillis(TRAP_STEP_MS))
            + "; i=$((i+1)); done";
    return rest.isZero() ? loop : loop + "; " + sleep(rest);
  }

  private static final long TRAP_STEP_MS = 100;

  /** A single-quoted shell word. NUL cannot be passed through a shell script. */
  static String quote(String text) {
    if (text.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("a shell script cannot print NUL; use bytes(...)");
    }
    return "'" + text.replace("'", "'\\''") + "'";
  }

  private static String tool(String name) {
    for (String dir : new String[] {"/usr/bin/", "/bin/"}) {
      if (Files.isExecutable(Path.of(dir + name))) {
        return dir + name;
      }
    }
    throw new IllegalStateException("no " + name + " in /usr/bin or /bin");
  }
}
