package io.capsule.realharness;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code capsule run <capsule> --task T --json} as its own JVM (the cli module's main class on this
 * test's class path), with a private HOME, so exit codes, stdout and Ctrl-C are the real command's.
 * Stdout is read line by line as it arrives, each line parsed as one JSON event.
 */
final class CapsuleRunProcess {
  /**
   * One harness-version cache for the whole suite (each run has its own HOME): a CLI's version is
   * probed once per suite, not per run ({@code gemini --version} alone takes seconds).
   */
  static final Path VERSION_CACHE = Path.of("target", "harness-versions.tsv").toAbsolutePath();

  private final Process process;
  private final Path stderr;
  private final List<JsonNode> events = new ArrayList<>();
  private final List<String> badLines = new ArrayList<>();
  private final Thread reader;

  private CapsuleRunProcess(Process process, Path stderr) {
    this.process = process;
    this.stderr = stderr;
    this.reader = new Thread(this::readStdout, "capsule-run-stdout");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts the command; HOME is {@code home}, run directories go under {@code traceDir}. */
  static CapsuleRunProcess start(Path capsule, Path home, Path traceDir, String task)
      throws IOException {
    return start(capsule, home, traceDir, task, Map.of());
  }

  /** As above, with {@code extraEnv} for the command (e.g. {@code CAPSULE_HARNESS_CONTAINMENT}). */
  static CapsuleRunProcess start(
      Path capsule, Path home, Path traceDir, String task, Map<String, String> extraEnv)
      throws IOException {
    return start(capsule, home, Optional.of(traceDir), traceDir.getParent(), task, extraEnv);
  }

  /**
   * Starts the command with no {@code --trace-dir} and no work root set: run directories go where
   * {@code capsule run} puts them by default for this HOME ({@link Suite#defaultRuns}).
   */
  static CapsuleRunProcess startWithDefaultWorkRoot(Path capsule, Path home, String task)
      throws IOException {
    return start(capsule, home, Optional.empty(), home, task, Map.of());
  }

  private static CapsuleRunProcess start(
      Path capsule,
      Path home,
      Optional<Path> traceDir,
      Path errDir,
      String task,
      Map<String, String> extraEnv)
      throws IOException {
    Files.createDirectories(home.resolve(".claude"));
    Path err = Files.createTempFile(errDir, "capsule-run", ".stderr");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command =
        new ArrayList<>(
            List.of(
                // A JVM started with SIGINT ignored (any background job of a non-interactive
                // shell, e.g. under CI) never runs its shutdown hooks on SIGINT; reset it so the
                // command sees Ctrl-C as it would in a terminal.
                "/usr/bin/env",
                "--default-signal=INT",
                java,
                "-cp",
                System.getProperty("java.class.path"),
                "io.capsule.cli.CapsuleMain",
                "run",
                capsule.toString(),
                "--task",
                task,
                "--json"));
    traceDir.ifPresent(
        d -> {
          command.add("--trace-dir");
          command.add(d.toString());
        });
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    Map<String, String> env = pb.environment();
    env.clear();
    env.put("HOME", home.toString());
    env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
    env.put("CAPSULE_VERSION_CACHE", VERSION_CACHE.toString());
    env.putAll(extraEnv);
    return new CapsuleRunProcess(pb.start(), err);
  }

  /**
   * {@code capsule doctor <capsule>} with the same private HOME, as its own JVM: its exit code and
   * everything it printed (stdout and stderr together).
   */
  static Doctor doctor(Path capsule, Path home, Duration timeout)
      throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                "io.capsule.cli.CapsuleMain",
                "doctor",
                capsule.toString())
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    Map<String, String> env = pb.environment();
    env.clear();
    env.put("HOME", home.toString());
    env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly().waitFor();
      throw new AssertionError("capsule doctor did not exit within " + timeout);
    }
    return new Doctor(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }

  /** What {@code capsule doctor} ended with. */
  record Doctor(int exit, String output) {}

  Process process() {
    return process;
  }

  /** Waits for an event matching {@code test}; empty if the process ended or time ran out. */
  Optional<JsonNode> awaitEvent(Predicate<JsonNode> test, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (events) {
      while (true) {
        for (JsonNode e : events) {
          if (test.test(e)) {
            return Optional.of(e);
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || !reader.isAlive()) {
          return Optional.empty();
        }
        TimeUnit.NANOSECONDS.timedWait(events, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      }
    }
  }

  /** Waits for the process to exit (killing it past the timeout) and returns what it printed. */
  Result finish(Duration timeout) throws InterruptedException, IOException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      String threads = threadDump();
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly().waitFor();
      reader.join(5_000);
      throw new AssertionError(
          "capsule run did not exit within "
              + timeout
              + "; stdout: "
              + events()
              + "\nstderr: "
              + stderr()
              + "\nthreads:\n"
              + threads);
    }
    reader.join(10_000);
    return new Result(process.exitValue(), events(), List.copyOf(badLines), stderr());
  }

  /** The stuck JVM's threads ({@code jcmd Thread.print}), to say where it hangs. */
  private String threadDump() throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process p =
        new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print")
            .redirectErrorStream(true)
            .start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(20, TimeUnit.SECONDS);
    return text;
  }

  List<JsonNode> events() {
    synchronized (events) {
      return List.copyOf(events);
    }
  }

  String stderr() throws IOException {
    return Files.readString(stderr, StandardCharsets.UTF_8);
  }

  private void readStdout() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        synchronized (events) {
          try {
            events.add(MessageStream.JSON.readTree(line));
          } catch (IOException notJson) {
            badLines.add(line);
          }
          events.notifyAll();
        }
      }
    } catch (IOException e) {
      // The process is gone; finish() reports what was read.
    }
  }

  /** A finished command: exit code, every JSON line, lines that were not JSON, and stderr. */
  record Result(int exit, List<JsonNode> events, List<String> nonJsonLines, String stderr) {

    /** The last line, which {@code --json} guarantees is {@code "event":"finished"}. */
    JsonNode finished() {
      JsonNode last = events.isEmpty() ? null : events.get(events.size() - 1);
      if (last == null || !"finished".equals(last.path("event").asText())) {
        throw new AssertionError("no finished line last; " + this);
      }
      return last;
    }

    List<JsonNode> named(String event) {
      return events.stream().filter(e -> event.equals(e.path("event").asText())).toList();
    }

    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("exit " + exit + "\n");
      events.forEach(e -> b.append(e).append('\n'));
      nonJsonLines.forEach(l -> b.append("(not JSON) ").append(l).append('\n'));
      return b.append("stderr:\n").append(stderr).toString();
    }
  }
}
