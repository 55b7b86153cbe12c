package io.capsule.runtime.core;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.Session;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
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

  private static final ObjectMapper JSON = new ObjectMapper();

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
   * One line of JSON (no newline): event_type, timestamp, then the fields in order. Written by a
   * streaming generator, field by field, with what the mapper would write for each value, so the
   * line is the one {@code writeValueAsString} of the same ordered map gives, without building that
   * map (issue #15: per record, the map copy and the mapper's serializer lookups cost more than the
   * writing).
   */
  public static String render(TraceRecord record, Instant at) {
    StringWriter line = new StringWriter(128);
    try (JsonGenerator g = JSON.createGenerator(line)) {
      writeRecord(g, record, at);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return line.toString();
  }

  /**
   * Each record as {@link #render} writes it, stamped with {@code clock}'s instant when its turn
   * comes, each followed by a newline: one generator for a parsed batch's records, not one each.
   */
  public static String renderLines(List<TraceRecord> records, Clock clock) {
    StringWriter lines = new StringWriter(128 * records.size());
    try (JsonGenerator g = JSON.createGenerator(lines)) {
      g.setRootValueSeparator(null); // the newline below separates the records
      for (TraceRecord r : records) {
        writeRecord(g, r, clock.instant());
        g.writeRaw('\n');
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return lines.toString();
  }

  private static void writeRecord(JsonGenerator g, TraceRecord record, Instant at)
      throws IOException {
    g.writeStartObject();
    g.writeStringField("event_type", record.eventType());
    g.writeStringField("timestamp", Timestamps.iso(at));
    for (int i = 0, n = record.size(); i < n; i++) {
      g.writeFieldName(record.key(i));
      writeValue(g, record.value(i));
    }
    g.writeEndObject();
  }

  /**
   * What the mapper writes for {@code v}: strings, ints, longs, booleans, lists and maps with
   * string keys directly; anything else (other numbers, other keys) through the mapper itself.
   */
  private static void writeValue(JsonGenerator g, Object v) throws IOException {
    if (v == null) {
      g.writeNull();
    } else if (v instanceof String s) {
      g.writeString(s);
    } else if (v instanceof Integer i) {
      g.writeNumber(i.intValue());
    } else if (v instanceof Long l) {
      g.writeNumber(l.longValue());
    } else if (v instanceof Boolean b) {
      g.writeBoolean(b.booleanValue());
    } else if (v instanceof List<?> list) {
      g.writeStartArray();
      for (Object item : list) {
        writeValue(g, item);
      }
      g.writeEndArray();
    } else if (v instanceof Map<?, ?> map && stringKeys(map)) {
      g.writeStartObject();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        g.writeFieldName((String) e.getKey());
        writeValue(g, e.getValue());
      }
      g.writeEndObject();
    } else {
      g.writeObject(v);
    }
  }

  private static boolean stringKeys(Map<?, ?> map) {
    for (Object k : map.keySet()) {
      if (!(k instanceof String)) {
        return false;
      }
    }
    return true;
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
