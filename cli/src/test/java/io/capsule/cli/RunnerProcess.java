package io.capsule.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code capsule runner} as a real JVM process (the test's class path, as {@code bin/capsule} runs
 * it), with up to 10 runs at once. Its stdout lines are kept with the time each arrived, so a test
 * can tell when it reconnected; stderr goes to a log file named after it. {@link #close} stops it
 * with SIGTERM (its runs and their harnesses end with it), SIGKILL past a bound.
 */
final class RunnerProcess implements AutoCloseable {
  /** A stdout line and when it was read ({@link System#nanoTime()}). */
  record Line(String text, long nanos) {}

  final String name;
  final Path log;
  private final Process process;
  private final List<Line> lines = new ArrayList<>();

  private RunnerProcess(String name, Path log, Process process) {
    this.name = name;
    this.log = log;
    this.process = process;
  }

  static RunnerProcess start(
      String name, Path logDir, List<String> jvmArgs, String hubUrls, Path tokenFile, Path capsules)
      throws IOException {
    return start(name, logDir, jvmArgs, hubUrls, tokenFile, capsules, List.of());
  }

  /** As above, with {@code more} options for {@code capsule runner} ({@code --ca-file F}). */
  static RunnerProcess start(
      String name,
      Path logDir,
      List<String> jvmArgs,
      String hubUrls,
      Path tokenFile,
      Path capsules,
      List<String> more)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmArgs);
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            CapsuleMain.class.getName(),
            "runner",
            "--hub",
            hubUrls,
            "--token-file",
            tokenFile.toString(),
            "--capsules",
            capsules.toString(),
            "--max-runs",
            "10"));
    command.addAll(more);
    Path log = logDir.resolve(name + ".log");
    Process p =
        new ProcessBuilder(command)
            .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    RunnerProcess r = new RunnerProcess(name, log, p);
    Thread drain = new Thread(r::drain, name + "-stdout");
    drain.setDaemon(true);
    drain.start();
    return r;
  }

  private void drain() {
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        synchronized (lines) {
          lines.add(new Line(line, System.nanoTime()));
          lines.notifyAll();
        }
      }
    } catch (IOException e) {
      // the process is gone
    }
  }

  List<String> output() {
    synchronized (lines) {
      return lines.stream().map(Line::text).toList();
    }
  }

  /** The URL of the node it last said it is connected to ("" before it said so). */
  String connectedUrl() {
    String prefix = "runner: connected to ";
    String url = "";
    for (String l : output()) {
      url = l.startsWith(prefix) ? l.substring(prefix.length()) : url;
    }
    return url;
  }

  /**
   * Milliseconds from {@code since} until the runner said it is connected to a node other than
   * {@code deadUrl}.
   */
  long awaitConnectedAfter(long since, String deadUrl, Duration within)
      throws InterruptedException {
    long end = System.nanoTime() + within.toNanos();
    synchronized (lines) {
      while (true) {
        for (Line l : lines) {
          if (l.nanos() > since
              && l.text().startsWith("runner: connected to ")
              && !l.text().endsWith(deadUrl)) {
            return Duration.ofNanos(l.nanos() - since).toMillis();
          }
        }
        long left = end - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(
              name
                  + " did not connect to another node within "
                  + within
                  + ": "
                  + output()
                  + "\n"
                  + tail(log));
        }
        lines.wait(Math.max(1, left / 1_000_000));
      }
    }
  }

  /** The end of a log file, for a failure message (the temp directory goes with the test). */
  static String tail(Path file) {
    try {
      String text = java.nio.file.Files.readString(file, StandardCharsets.UTF_8);
      return file.getFileName()
          + ": "
          + (text.length() <= 3_000 ? text : "…" + text.substring(text.length() - 3_000));
    } catch (IOException e) {
      return file + ": unreadable (" + e + ")";
    }
  }

  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
