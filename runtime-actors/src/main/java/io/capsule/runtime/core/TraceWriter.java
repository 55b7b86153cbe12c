package io.capsule.runtime.core;

import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.Session;
import java.io.IOException;
import java.io.Writer;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Writes a run's trace (docs/run-semantics.md §10): one JSON object per line, each with {@code
 * event_type} first and {@code timestamp} (ISO-8601, UTC) second, then the record's fields.
 * Argument values and env-set values are never written (a driver may put a token there): {@link
 * #harnessStart} keeps only the count of arguments and the names of variables and files.
 *
 * <p>Not thread-safe: one writer per run, used by the run actor. The writer is buffered by the
 * caller; a failing write disables the trace (the run goes on) rather than failing the run.
 */
public final class TraceWriter implements AutoCloseable {

  private final Writer out;
  private final Clock clock;
  private volatile boolean broken;

  private TraceWriter(Writer out, Clock clock) {
    this.out = out;
    this.clock = clock;
  }

  public static TraceWriter to(Writer out, Clock clock) {
    return new TraceWriter(out, clock);
  }

  /** A trace that keeps nothing (a run with no run directory). */
  public static TraceWriter discard() {
    return new TraceWriter(Writer.nullWriter(), Clock.systemUTC());
  }

  public void write(TraceRecord record) {
    if (broken) {
      return;
    }
    try {
      out.write(render(record, clock.instant()));
      out.write('\n');
    } catch (IOException e) {
      broken = true;
    }
  }

  public void writeAll(List<TraceRecord> records) {
    records.forEach(this::write);
  }

  /** Whether a write failed (the trace stopped there). */
  public boolean broken() {
    return broken;
  }

  @Override
  public void close() {
    try {
      out.close();
    } catch (IOException e) {
      broken = true;
    }
  }

  /**
   * One line of JSON (no newline): event_type, timestamp, then the fields in order; the line {@code
   * writeValueAsString} of the same ordered map gives, written without building that map ({@link
   * TraceJson}).
   */
  public static String render(TraceRecord record, Instant at) {
    StringBuilder line = new StringBuilder(128);
    TraceJson.append(line, record, at);
    return line.toString();
  }

  /**
   * Each record as {@link #render} writes it, stamped with {@code clock}'s instant when its turn
   * comes, each followed by a newline, appended to {@code out}.
   */
  public static void renderLines(List<TraceRecord> records, Clock clock, StringBuilder out) {
    for (TraceRecord r : records) {
      TraceJson.append(out, r, clock.instant());
      out.append('\n');
    }
  }

  /**
   * The {@code harness_start} record: who runs what, with counts and names only — never argument
   * values, env values, file contents or stdin bytes.
   */
  public static TraceRecord harnessStart(
      String driver,
      String harness,
      String binaryPath,
      Optional<String> harnessVersion,
      boolean tested,
      Session session,
      LaunchPlan plan,
      List<String> envNames) {
    return TraceRecord.of("harness_start")
        .with("driver", driver)
        .with("harness", harness)
        .with("binary", binaryPath)
        .with("harness_version", harnessVersion.orElse("none"))
        .with("tested", tested)
        .with("session_id", session.id())
        .with("session_mode", session.mode().witName())
        .with("args_count", plan.args().size())
        .with("env", envNames)
        .with("env_set", plan.envSet().stream().map(EnvVar::name).toList())
        .with("files", plan.files().stream().map(DriverFile::name).toList())
        .with("stdin_bytes", plan.stdin().map(b -> b.length).orElse(0))
        .with("keep_stdin_open", plan.keepStdinOpen());
  }
}
