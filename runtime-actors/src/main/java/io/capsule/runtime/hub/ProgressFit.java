package io.capsule.runtime.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Makes a run's progress and report fit the hub's frame cap (docs/runner-protocol.md: a bigger
 * frame is refused with 1009), losing as little as possible. Pure; no I/O.
 *
 * <ul>
 *   <li>A {@code text_delta} / {@code thinking_delta} carries only its new text (see {@link
 *       io.capsule.runtime.javadsl.RunEventJson}); one still too big is split into several deltas
 *       (on code point boundaries): nothing is lost, their concatenation is the original.
 *   <li>Any other event too big has its longest strings cut until it fits, ending in {@code …},
 *       with {@code "truncated_bytes"} saying how many UTF-8 bytes were dropped. The run's trace
 *       and the embedding API keep the whole event.
 *   <li>A report too big has its {@code summary_business} cut the same way (the whole result
 *       arrived as text progress), so the task always gets its one report.
 * </ul>
 *
 * <p>Sizes are measured by encoding the frame as it will be sent (with the largest possible seq),
 * so the envelope and JSON escaping are counted exactly.
 */
final class ProgressFit {
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final String ELLIPSIS = "…";

  /**
   * Room kept free beside a cut string: the ellipsis, {@code truncated_bytes} or the report's
   * marker (at most ~60 bytes), and a margin.
   */
  private static final int SLACK = 128;

  private ProgressFit() {}

  /** The progress frames (unnumbered) that carry {@code payload}: usually exactly one. */
  static List<TaskProgress> progress(String taskId, String kind, ObjectNode payload, int cap) {
    // Nearly every event is far below the cap: a bound from the tree says so without encoding it
    // (the client encodes each frame once, to send it).
    if (ENVELOPE + maxBytes(taskId) + maxBytes(kind) + maxBytes(payload) <= cap) {
      return List.of(new TaskProgress(taskId, kind, payload));
    }
    ObjectNode p = payload.deepCopy();
    String event = p.path("event").asText("");
    Function<ObjectNode, Integer> size = n -> size(new TaskProgress(taskId, kind, n));
    if (size.apply(p) <= cap) {
      return List.of(new TaskProgress(taskId, kind, p));
    }
    if (event.endsWith("_delta") && p.path("delta").isTextual()) {
      String delta = p.get("delta").textValue();
      ObjectNode empty = p.deepCopy().put("delta", "");
      int budget = cap - size.apply(empty) - SLACK;
      if (budget > 0) {
        List<TaskProgress> pieces = new ArrayList<>();
        for (String piece : split(delta, budget)) {
          pieces.add(new TaskProgress(taskId, kind, p.deepCopy().put("delta", piece)));
        }
        return pieces;
      }
    }
    return List.of(new TaskProgress(taskId, kind, cut(p, size, cap)));
  }

  /** The report as one frame under the cap: its summary cut when it must be. */
  static TaskReport report(TaskReportBody body, int cap) {
    TaskReport whole = new TaskReport(body);
    if (ENVELOPE + maxBytes(body.json()) <= cap || size(whole) <= cap) {
      return whole;
    }
    ObjectNode json = body.json().deepCopy();
    ObjectNode fitted =
        cut(json, n -> size(new TaskReport(TaskReportBody.wrap(n))), cap, "summary_business");
    return new TaskReport(TaskReportBody.wrap(fitted));
  }

  /**
   * A frame's bytes beside its body: {@code type}, {@code schema_version}, the largest {@code seq},
   * the field names and punctuation of {@code task.progress} and {@code task.report}.
   */
  private static final int ENVELOPE = 160;

  /**
   * An upper bound of the bytes {@code node} takes once encoded: at most {@link #MAX_ESCAPED} bytes
   * per UTF-16 unit of every string and field name, numbers as written, and a few bytes of
   * punctuation per member. Walking the tree is far cheaper than encoding it.
   */
  static long maxBytes(JsonNode node) {
    if (node.isTextual()) {
      return maxBytes(node.textValue());
    }
    if (node.isContainerNode()) {
      long total = 2;
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        total += maxBytes(e.getKey()) + 1 + maxBytes(e.getValue()) + 1;
      }
      for (int i = 0; node.isArray() && i < node.size(); i++) {
        total += maxBytes(node.get(i)) + 1;
      }
      return total;
    }
    return node.isNumber() ? node.asText().length() : 5; // true, false, null
  }

  private static long maxBytes(String s) {
    return 2 + (long) MAX_ESCAPED * s.length();
  }

  /** The most bytes one UTF-16 unit becomes ({@code \u0001}; each half of a pair is six too). */
  private static final int MAX_ESCAPED = 6;

  private static int size(SequencedFrame frame) {
    return CODEC.encode(frame.withSeq(Long.MAX_VALUE)).length;
  }

  /**
   * Cuts the longest top-level strings of {@code node} (or only the field {@code only}) until it
   * fits. Each cut keeps a prefix of the field's original text and ends it with {@code …}.
   */
  private static ObjectNode cut(
      ObjectNode node, Function<ObjectNode, Integer> size, int cap, String... only) {
    ObjectNode n = node.deepCopy();
    Map<String, String> originals = new LinkedHashMap<>();
    Map<String, String> kept = new LinkedHashMap<>();
    Set<String> exhausted = new HashSet<>();
    int over;
    while ((over = size.apply(n) - cap) > 0) {
      String field = longestString(n, exhausted, only);
      if (field == null) {
        break; // nothing left to cut: the sender refuses it (E-PRO-005) and says so
      }
      String original = originals.computeIfAbsent(field, f -> n.get(f).textValue());
      String current = kept.getOrDefault(field, original);
      String prefix = prefix(original, escapedLength(current) - over - SLACK);
      kept.put(field, prefix);
      if (prefix.isEmpty()) {
        exhausted.add(field); // nothing more to take from it
      }
      long dropped = 0;
      for (Map.Entry<String, String> e : kept.entrySet()) {
        dropped += utf8(originals.get(e.getKey())) - utf8(e.getValue());
      }
      if (only.length == 0) {
        n.put(field, prefix + ELLIPSIS); // at its shortest, the next round picks another field
        n.put("truncated_bytes", dropped);
      } else {
        n.put(field, prefix + ELLIPSIS + " [" + dropped + " bytes cut to fit the frame cap]");
      }
    }
    return n;
  }

  private static String longestString(ObjectNode n, Set<String> exhausted, String... only) {
    String best = null;
    int bestLength = ELLIPSIS.length();
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      boolean wanted =
          !exhausted.contains(e.getKey())
              && (only.length == 0 || List.of(only).contains(e.getKey()));
      if (wanted && e.getValue().isTextual() && e.getValue().textValue().length() > bestLength) {
        best = e.getKey();
        bestLength = e.getValue().textValue().length();
      }
    }
    return best;
  }

  /** Consecutive pieces of {@code s}, each at most {@code budget} bytes once JSON-escaped. */
  static List<String> split(String s, int budget) {
    List<String> pieces = new ArrayList<>();
    int start = 0;
    while (start < s.length()) {
      String piece = prefix(s.substring(start), budget);
      if (piece.isEmpty()) { // a budget below one code point's escape: still make progress
        piece = s.substring(start, s.offsetByCodePoints(start, 1));
      }
      pieces.add(piece);
      start += piece.length();
    }
    return pieces;
  }

  /** The longest prefix of {@code s}, whole code points, at most {@code budget} escaped bytes. */
  static String prefix(String s, int budget) {
    int used = 0;
    int i = 0;
    while (i < s.length()) {
      int cp = s.codePointAt(i);
      int cost = escapedBytes(cp);
      if (used + cost > budget) {
        break;
      }
      used += cost;
      i += Character.charCount(cp);
    }
    return s.substring(0, i);
  }

  static int escapedLength(String s) {
    int total = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      total += escapedBytes(cp);
      i += Character.charCount(cp);
    }
    return total;
  }

  /**
   * Bytes a code point takes in a JSON string as the protocol's codec writes it (Jackson's UTF-8
   * generator, default features): two for the short escapes ({@code \b \t \n \f \r}, quote,
   * backslash), six for other control characters and lone surrogates, and twelve for a
   * supplementary character (Jackson escapes each half of the pair). {@code ProgressFitTest} pins
   * this against the real encoder.
   */
  static int escapedBytes(int cp) {
    if (cp == '\b' || cp == '\t' || cp == '\n' || cp == '\f' || cp == '\r') {
      return 2;
    }
    if (cp == '"' || cp == '\\') {
      return 2;
    }
    if (cp < 0x20) {
      return 6;
    }
    if (cp < 0x80) {
      return 1;
    }
    if (cp < 0x800) {
      return 2;
    }
    if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
      return 6;
    }
    return cp < 0x10000 ? 3 : 12;
  }

  private static long utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }
}
