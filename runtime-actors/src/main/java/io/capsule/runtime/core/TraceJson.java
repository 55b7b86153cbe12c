package io.capsule.runtime.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A trace record as one line of JSON, appended to a {@link StringBuilder}: the characters Jackson's
 * {@code ObjectMapper} writes for the same ordered map ({@code event_type}, {@code timestamp}, then
 * the fields), written here directly. Why: a parsed batch's records went through a {@code
 * JsonGenerator} into a {@code StringWriter} and were copied twice more on their way to the file
 * queue; written straight into the queue's builder, a record of ~190 characters costs about a
 * quarter less (1.0–1.2 → 0.75–0.8 µs, hot; issue #15: the trace was a fifth of the run actor's CPU
 * samples). Pure; the tests hold it to the mapper's output character for character.
 *
 * <p>What Jackson writes, and so this: no whitespace; in strings and names {@code "} and {@code \}
 * escaped with a backslash, the control characters U+0000–U+001F as {@code \b \t \n \f \r} or
 * {@code \}{@code u00XX} (upper-case hex), everything else (U+007F and non-ASCII included) as it
 * is; ints and longs in decimal. Values of any other type (a {@code Double}, a map with non-string
 * keys) are handed to the mapper itself, so they come out exactly as before.
 */
final class TraceJson {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  /**
   * For each character below 128: 0 as it is, -1 as {@code \}{@code u00XX}, else its short escape.
   */
  private static final int[] ESCAPES = new int[128];

  static {
    for (int c = 0; c < 0x20; c++) {
      ESCAPES[c] = -1;
    }
    ESCAPES['"'] = '"';
    ESCAPES['\\'] = '\\';
    ESCAPES['\b'] = 'b';
    ESCAPES['\t'] = 't';
    ESCAPES['\f'] = 'f';
    ESCAPES['\n'] = 'n';
    ESCAPES['\r'] = 'r';
  }

  private TraceJson() {}

  /** Appends {@code record}, stamped {@code at}, as one line of JSON (no newline). */
  static void append(StringBuilder out, TraceRecord record, Instant at) {
    out.append("{\"event_type\":");
    string(out, record.eventType());
    out.append(",\"timestamp\":\"").append(Timestamps.iso(at)).append('"');
    for (int i = 0, n = record.size(); i < n; i++) {
      out.append(',');
      string(out, record.key(i));
      out.append(':');
      value(out, record.value(i));
    }
    out.append('}');
  }

  private static void value(StringBuilder out, Object v) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof String s) {
      string(out, s);
    } else if (v instanceof Integer i) {
      out.append(i.intValue());
    } else if (v instanceof Long l) {
      out.append(l.longValue());
    } else if (v instanceof Boolean b) {
      out.append(b.booleanValue());
    } else if (v instanceof List<?> list) {
      out.append('[');
      boolean first = true;
      for (Object item : list) {
        if (!first) {
          out.append(',');
        }
        first = false;
        value(out, item);
      }
      out.append(']');
    } else if (v instanceof Map<?, ?> map && stringKeys(map)) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(out, (String) e.getKey());
        out.append(':');
        value(out, e.getValue());
      }
      out.append('}');
    } else {
      try {
        out.append(JSON.writeValueAsString(v));
      } catch (JsonProcessingException e) {
        throw new UncheckedIOException(e);
      }
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

  /** {@code s} quoted, its runs of characters that need no escape appended whole. */
  private static void string(StringBuilder out, String s) {
    out.append('"');
    int n = s.length();
    int start = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c < 128 && ESCAPES[c] != 0) {
        out.append(s, start, i);
        int e = ESCAPES[c];
        out.append('\\');
        if (e > 0) {
          out.append((char) e);
        } else {
          out.append("u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
        }
        start = i + 1;
      }
    }
    out.append(s, start, n).append('"');
  }
}
