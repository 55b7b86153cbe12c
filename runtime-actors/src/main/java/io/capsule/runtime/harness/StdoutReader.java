package io.capsule.runtime.harness;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Optional;

/**
 * The harness's stdout read a pipe read at a time into one reused buffer and framed right there, by
 * the thread that read it: each call returns the lines its reads completed, cut into {@link
 * LineBatches} pieces. Why here and not after the stream's async boundary: a 64 KiB read framed by
 * another thread was first copied into a fresh {@code ByteString} and then read cold from another
 * core's cache; the newline scan's first touch of those bytes was the largest per-line cost on the
 * run's actors (issue #15). The framer keeps no reference to the buffer (it copies what it holds),
 * so the buffer is reused.
 *
 * <p>Blocking: {@link #next} waits in the pipe's {@code read}; call it on the I/O dispatcher.
 * Confined to one caller at a time.
 */
final class StdoutReader implements AutoCloseable {

  private final InputStream in;
  private final byte[] buffer;
  private final LineFramer framer;
  private final LineBatches weights;

  /**
   * @param chunkSize the most bytes one read takes
   */
  StdoutReader(InputStream in, int chunkSize, LineFramer framer, LineBatches weights) {
    this.in = in;
    this.buffer = new byte[chunkSize];
    this.framer = framer;
    this.weights = weights;
  }

  /**
   * Reads until at least one line is complete and returns the lines completed, in pieces; empty
   * once stdout has ended (the bytes after the last newline are dropped, as {@link LineFramer}
   * says).
   */
  Optional<List<LineBatches.Piece>> next() throws IOException {
    while (true) {
      int n = in.read(buffer, 0, buffer.length);
      if (n < 0) {
        return Optional.empty();
      }
      List<LineFramer.Line> lines = framer.feed(buffer, 0, n);
      if (!lines.isEmpty()) {
        return Optional.of(weights.pieces(lines));
      }
    }
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
