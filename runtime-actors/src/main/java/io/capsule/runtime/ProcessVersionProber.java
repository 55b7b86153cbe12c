package io.capsule.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The version probe as a plain child process on a blocking executor: output captured (at most 64
 * KiB of each stream is kept: a version is one line), killed after the bound. The run bounds its
 * own wait with a timer as well.
 */
public final class ProcessVersionProber implements VersionProber {

  private static final int KEEP = 64 * 1024;

  private final Executor blocking;
  private final Duration bound;

  public ProcessVersionProber(Executor blocking, Duration bound) {
    this.blocking = blocking;
    this.bound = bound;
  }

  @Override
  public CompletionStage<Optional<String>> probe(
      Path binary, List<String> args, Map<String, String> env, Path workdir) {
    return CompletableFuture.supplyAsync(() -> run(binary, args, env, workdir), blocking);
  }

  private Optional<String> run(
      Path binary, List<String> args, Map<String, String> env, Path workdir) {
    ProcessBuilder pb = new ProcessBuilder();
    pb.command().add(binary.toString());
    pb.command().addAll(args);
    pb.environment().clear();
    pb.environment().putAll(env);
    pb.directory(workdir.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process p = null;
    try {
      p = pb.start();
      Process proc = p;
      CompletableFuture<String> err =
          CompletableFuture.supplyAsync(() -> read(proc.getErrorStream()), blocking);
      String out = read(p.getInputStream());
      if (!p.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        return Optional.empty();
      }
      Optional<String> line = firstLine(out);
      return line.isPresent() ? line : firstLine(err.get(bound.toMillis(), TimeUnit.MILLISECONDS));
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      if (p != null) {
        p.destroyForcibly();
      }
      return Optional.empty();
    }
  }

  /** The first non-empty trimmed line. */
  static Optional<String> firstLine(String text) {
    return text.lines().map(String::trim).filter(l -> !l.isEmpty()).findFirst();
  }

  private static String read(InputStream in) {
    try (in) {
      byte[] kept = in.readNBytes(KEEP);
      in.transferTo(java.io.OutputStream.nullOutputStream());
      return new String(kept, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }
}
