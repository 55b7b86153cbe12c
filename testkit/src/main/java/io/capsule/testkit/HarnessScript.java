package io.capsule.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * What a fake harness does, step by step: lines to stdout or stderr, raw bytes, pauses, floods,
 * reading stdin, closing stdout, lingering, how it takes SIGINT and its exit code. Run it two ways:
 *
 * <ul>
 *   <li>{@link #writeJson(Path)} + {@link ScriptedHarness#command(Path)}: the JVM replays it
 *       (portable; but a JVM cannot reliably ignore SIGINT, see {@link Sigint#ignore()});
 *   <li>{@link #writeShellScript(Path)}: a {@code /bin/sh} script that does the same, for
 *       everything including ignoring SIGINT, and starts in milliseconds instead of a JVM's
 *       fraction of a second.
 * </ul>
 *
 * Immutable; build with {@link #builder()}.
 */
public final class HarnessScript {

  /** One thing the harness does. */
  public sealed interface Step {}

  /** Writes {@code text} and a newline to stdout. */
  public record Out(String text) implements Step {}

  /** Writes these bytes to stdout as they are (no newline added). */
  public record Bytes(byte[] bytes) implements Step {}

  /** Writes {@code text} and a newline to stderr. */
  public record Err(String text) implements Step {}

  /** Waits. */
  public record Sleep(Duration duration) implements Step {}

  /** Writes {@code text} and a newline {@code count} times, as fast as it can. */
  public record Flood(String text, long count) implements Step {}

  /** Reads one line of stdin; when {@code echoPrefix} is non-null, prints it with the prefix. */
  public record ReadLine(String echoPrefix) implements Step {}

  /** Closes stdout and goes on. */
  public record CloseStdout() implements Step {}

  /** How the harness takes SIGINT. */
  public record Sigint(String mode, int exitCode, String line) {

    /** Dies by the signal (the default). */
    public static Sigint obey() {
      return new Sigint("obey", 0, null);
    }

    /**
     * Keeps running. The shell form does this reliably; the JVM form tries the JDK's unsupported
     * signal API and exits 2 with a message when it is not there.
     */
    public static Sigint ignore() {
      return new Sigint("ignore", 0, null);
    }

    /** Prints {@code line} (if not null) to stdout and exits with {@code exitCode}. */
    public static Sigint exitWith(int exitCode, String line) {
      return new Sigint("exit", exitCode, line);
    }
  }

  private final List<Step> steps;
  private final Sigint sigint;
  private final int exitCode;

  private HarnessScript(List<Step> steps, Sigint sigint, int exitCode) {
    this.steps = List.copyOf(steps);
    this.sigint = sigint;
    this.exitCode = exitCode;
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<Step> steps() {
    return steps;
  }

  public Sigint sigint() {
    return sigint;
  }

  public int exitCode() {
    return exitCode;
  }

  /** The script as the JSON that {@link ScriptedHarness} reads. */
  public String toJson() {
    StringBuilder out = new StringBuilder("{\n  \"on_sigint\": ");
    if (sigint.mode().equals("exit")) {
      out.append("{\"exit\": ").append(sigint.exitCode());
      if (sigint.line() != null) {
        out.append(", \"line\": ").append(MiniJson.quote(sigint.line()));
      }
      out.append('}');
    } else {
      out.append(MiniJson.quote(sigint.mode()));
    }
    out.append(",\n  \"steps\": [");
    for (int i = 0; i < steps.size(); i++) {
      out.append(i == 0 ? "\n    " : ",\n    ").append(stepJson(steps.get(i)));
    }
    return out.append("\n  ],\n  \"exit\": ").append(exitCode).append("\n}\n").toString();
  }

  private static String stepJson(Step step) {
    if (step instanceof Out o) {
      return "{\"out\": " + MiniJson.quote(o.text()) + "}";
    } else if (step instanceof Bytes b) {
      return "{\"bytes_hex\": \"" + HexFormat.of().formatHex(b.bytes()) + "\"}";
    } else if (step instanceof Err e) {
      return "{\"err\": " + MiniJson.quote(e.text()) + "}";
    } else if (step instanceof Sleep s) {
      return "{\"sleep_ms\": " + s.duration().toMillis() + "}";
    } else if (step instanceof Flood f) {
      return "{\"flood\": " + MiniJson.quote(f.text()) + ", \"count\": " + f.count() + "}";
    } else if (step instanceof ReadLine r) {
      return "{\"read_line\": "
          + (r.echoPrefix() == null ? "true" : MiniJson.quote(r.echoPrefix()))
          + "}";
    } else {
      return "{\"close_stdout\": true}";
    }
  }

  /** Writes {@link #toJson()} to {@code file}; returns it. */
  public Path writeJson(Path file) throws IOException {
    return Files.writeString(file, toJson(), StandardCharsets.UTF_8);
  }

  /**
   * Writes an executable {@code /bin/sh} script doing the same (mode 0700); returns it. The script
   * needs no PATH: the few tools it uses are found now and written with their absolute paths.
   */
  public Path writeShellScript(Path file) throws IOException {
    Files.writeString(file, ShellScripts.render(this), StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
    return file;
  }

  /** Builds a script; steps run in the order they are added. */
  public static final class Builder {
    private final List<Step> steps = new ArrayList<>();
    private Sigint sigint = Sigint.obey();
    private int exitCode;

    private Builder() {}

    public Builder out(String text) {
      steps.add(new Out(Objects.requireNonNull(text, "text")));
      return this;
    }

    /** Many stdout lines in order. */
    public Builder out(List<String> lines) {
      lines.forEach(this::out);
      return this;
    }

    public Builder bytes(byte[] bytes) {
      steps.add(new Bytes(bytes.clone()));
      return this;
    }

    public Builder err(String text) {
      steps.add(new Err(Objects.requireNonNull(text, "text")));
      return this;
    }

    public Builder sleep(Duration duration) {
      steps.add(new Sleep(Objects.requireNonNull(duration, "duration")));
      return this;
    }

    /** Stays alive after its output (a harness that lingers after its result). */
    public Builder linger(Duration duration) {
      return sleep(duration);
    }

    public Builder flood(String text, long count) {
      steps.add(new Flood(Objects.requireNonNull(text, "text"), count));
      return this;
    }

    public Builder readLine() {
      steps.add(new ReadLine(null));
      return this;
    }

    public Builder echoLine(String prefix) {
      steps.add(new ReadLine(Objects.requireNonNull(prefix, "prefix")));
      return this;
    }

    public Builder closeStdout() {
      steps.add(new CloseStdout());
      return this;
    }

    public Builder onSigint(Sigint handling) {
      this.sigint = Objects.requireNonNull(handling, "handling");
      return this;
    }

    public Builder exit(int code) {
      this.exitCode = code;
      return this;
    }

    public HarnessScript build() {
      return new HarnessScript(steps, sigint, exitCode);
    }
  }
}
