package io.capsule.bench.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A file of recorded harness output: the real Claude Code stream-json transcripts (the same
 * resources ParseBench reads), cycled to exactly {@code n} non-blank lines.
 */
final class RecordedLines {

  private static final String[] TRANSCRIPTS = {
    "auth401", "happy", "interrupt", "mcp", "rate429", "thinking", "twoturn"
  };

  private RecordedLines() {}

  /** Writes {@code n} lines to a new temporary file and returns its path. */
  static Path write(int n) {
    return write(n, transcriptLines());
  }

  /**
   * The recorded lines without the {@code result} lines: the real driver ends a turn on each, and
   * the end-to-end run must stream the whole file as one turn.
   */
  static List<String> withoutResults() {
    ObjectMapper mapper = new ObjectMapper();
    List<String> out = new ArrayList<>();
    for (String line : transcriptLines()) {
      try {
        if (!"result".equals(mapper.readTree(line).path("type").asText())) {
          out.add(line);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  /** Writes {@code n} of {@code lines}, cycled, to a new temporary file and returns its path. */
  static Path write(int n, List<String> lines) {
    try {
      Path file = Files.createTempFile("capsule-bench-lines-", ".jsonl");
      try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        for (int i = 0; i < n; i++) {
          out.write(lines.get(i % lines.size()));
          out.write('\n');
        }
      }
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<String> transcriptLines() {
    List<String> out = new ArrayList<>();
    for (String name : TRANSCRIPTS) {
      String path = "/transcripts/claude-code/" + name + ".jsonl";
      try (InputStream in = RecordedLines.class.getResourceAsStream(path)) {
        if (in == null) {
          throw new IllegalStateException("missing resource " + path);
        }
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          if (!line.isBlank()) {
            out.add(line);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }
}
