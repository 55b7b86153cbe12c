package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link StdoutReader}: stdout framed a read at a time into a reused buffer, the lines the same
 * whatever sizes the reads come in, never an empty answer before the end, pieces within a batch's
 * weight, and the pipe closed with it.
 */
class StdoutReaderTest {

  /** A pipe whose reads return at most a few bytes each, sizes drawn from {@code random}. */
  private static final class ShortReads extends InputStream {
    private final byte[] bytes;
    private final Random random;
    private int at;
    boolean closed;
    int reads;

    ShortReads(String text, Random random) {
      this.bytes = text.getBytes(StandardCharsets.UTF_8);
      this.random = random;
    }

    @Override
    public int read() {
      throw new UnsupportedOperationException("the reader reads into its buffer");
    }

    @Override
    public int read(byte[] b, int off, int len) {
      reads++;
      if (at == bytes.length) {
        return -1;
      }
      int n = Math.min(Math.min(len, 1 + random.nextInt(9)), bytes.length - at);
      System.arraycopy(bytes, at, b, off, n);
      at += n;
      return n;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  private static List<String> readAll(StdoutReader reader) throws IOException {
    List<String> lines = new ArrayList<>();
    for (Optional<List<LineBatches.Piece>> next = reader.next();
        next.isPresent();
        next = reader.next()) {
      assertTrue(!next.get().isEmpty(), "an answer with no lines before the end");
      for (LineBatches.Piece piece : next.get()) {
        piece.lines().forEach(l -> lines.add(l.text()));
      }
    }
    return lines;
  }

  @Test
  void theLinesAreTheSameWhateverSizesTheReadsComeIn() throws IOException {
    List<String> expected = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 300; i++) {
      String line = "{\"n\":" + i + ",\"t\":\"" + "\u00e9\u20ac".repeat(i % 7) + "\"}";
      expected.add(line);
      text.append(line).append(i % 3 == 0 ? "\r\n" : "\n");
    }
    text.append("an unterminated tail");
    for (int seed = 0; seed < 20; seed++) {
      ShortReads pipe = new ShortReads(text.toString(), new Random(seed));
      // A buffer of 8 bytes: every line spans reads and the buffer is overwritten under it.
      StdoutReader reader =
          new StdoutReader(pipe, 8, new LineFramer(1024), new LineBatches(4, 1024));
      assertEquals(expected, readAll(reader), "seed " + seed);
    }
  }

  @Test
  void readsThatCompleteNoLineAreReadThroughAndTheEndIsEmpty() throws IOException {
    ShortReads pipe = new ShortReads("abcdefghijklmnopqrstuvwxyz\nz", new Random(1));
    StdoutReader reader =
        new StdoutReader(pipe, 64, new LineFramer(1024), new LineBatches(4, 1024));
    Optional<List<LineBatches.Piece>> first = reader.next();
    assertEquals(1, first.orElseThrow().size());
    assertEquals("abcdefghijklmnopqrstuvwxyz", first.get().get(0).lines().get(0).text());
    assertTrue(pipe.reads > 1, "one read of at most 9 bytes cannot hold the line");
    assertEquals(Optional.empty(), reader.next());
  }

  @Test
  void linesOfOneReadComeInPiecesOfAtMostABatchsWeight() throws IOException {
    InputStream pipe = new java.io.ByteArrayInputStream("a\nb\nc\nd\ne\n".getBytes());
    StdoutReader reader =
        new StdoutReader(pipe, 64, new LineFramer(1024), new LineBatches(2, 1024));
    List<LineBatches.Piece> pieces = reader.next().orElseThrow();
    assertEquals(List.of(2, 2, 1), pieces.stream().map(p -> p.lines().size()).toList());
  }

  @Test
  void closingTheReaderClosesThePipeAndAFailedReadIsThrown() throws IOException {
    ShortReads pipe = new ShortReads("x\n", new Random(2));
    new StdoutReader(pipe, 64, new LineFramer(1024), new LineBatches(4, 1024)).close();
    assertTrue(pipe.closed);

    InputStream failing =
        new InputStream() {
          @Override
          public int read() throws IOException {
            throw new IOException("pipe broke");
          }
        };
    StdoutReader reader =
        new StdoutReader(failing, 64, new LineFramer(1024), new LineBatches(4, 1024));
    assertEquals("pipe broke", assertThrows(IOException.class, reader::next).getMessage());
  }
}
