package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code capsule hub ARGS} as a real JVM process ({@code java -cp} of this test's class path, the
 * jars {@code bin/capsule} runs), returned once it listens. Its stdout is kept in memory (it is a
 * few lines), its stderr appended to a log file named after it. {@link #close} stops it (SIGTERM,
 * then SIGKILL past a bound); {@link #kill} is the SIGKILL of a crash.
 */
final class HubProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("listening on (https?)://[^:]+:(\\d+)");

  final String name;
  final Path log;
  private final Process process;
  private final List<RunnerProcess.Line> output = new ArrayList<>();
  private final CompletableFuture<Integer> port = new CompletableFuture<>();
  private volatile boolean secure;

  private HubProcess(String name, Path log, Process process) {
    this.name = name;
    this.log = log;
    this.process = process;
  }

  /**
   * Starts the hub and waits (at most {@code startWithin}) until it says where it listens.
   *
   * @param jvmArgs options for the JVM (heap, -D settings), before the main class
   */
  static HubProcess start(
      String name, Path logDir, List<String> jvmArgs, List<String> args, Duration startWithin)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmArgs);
    command.addAll(
        List.of("-cp", System.getProperty("java.class.path"), CapsuleMain.class.getName(), "hub"));
    command.addAll(args);
    Path log = logDir.resolve(name + ".log");
    Process p =
        new ProcessBuilder(command)
            .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    HubProcess hub = new HubProcess(name, log, p);
    Thread drain = new Thread(hub::drain, name + "-stdout");
    drain.setDaemon(true);
    drain.start();
    try {
      hub.port.get(startWithin.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      hub.close();
      throw new AssertionError(
          name
              + " did not listen within "
              + startWithin
              + "; said "
              + hub.output()
              + "; see "
              + log,
          e);
    }
    return hub;
  }

  private void drain() {
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        synchronized (output) {
          output.add(new RunnerProcess.Line(line, System.nanoTime()));
        }
        Matcher m = LISTENING.matcher(line);
        if (m.find()) {
          secure = m.group(1).equals("https");
          port.complete(Integer.parseInt(m.group(2)));
        }
      }
    } catch (IOException e) {
      // the process is gone; whoever waits learns it below
    }
    port.completeExceptionally(new IllegalStateException(name + " exited before listening"));
  }

  int port() {
    return port.join();
  }

  /** {@code http://} or, for a hub started with {@code --tls-cert}, {@code https://}. */
  String apiUrl() {
    int p = port();
    return (secure ? "https" : "http") + "://127.0.0.1:" + p;
  }

  String runnerUrl() {
    int p = port();
    return (secure ? "wss" : "ws") + "://127.0.0.1:" + p + "/v1/runner";
  }

  long pid() {
    return process.pid();
  }

  boolean alive() {
    return process.isAlive();
  }

  List<String> output() {
    synchronized (output) {
      return output.stream().map(RunnerProcess.Line::text).toList();
    }
  }

  /** When it first printed a line holding {@code text} ({@link System#nanoTime()}), if it did. */
  java.util.OptionalLong saidAt(String text) {
    synchronized (output) {
      return output.stream()
          .filter(l -> l.text().contains(text))
          .mapToLong(RunnerProcess.Line::nanos)
          .findFirst();
    }
  }

  /** SIGKILL: no shutdown hook, no close frames, no leaving the cluster. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    assertTrue(process.waitFor(30, TimeUnit.SECONDS), name + " outlived SIGKILL for 30 s");
    assertEquals(137, process.exitValue(), name + " was killed by SIGKILL");
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
