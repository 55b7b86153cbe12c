package io.capsule.runtime.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * The weights that bound a stdout batch, and the cutting of one chunk's lines into pieces that each
 * fit one batch. Pure. A line weighs at least 1 and a line of the cap weighs the whole batch, so a
 * batch of total weight at most {@code batchMaxLines} holds at most that many lines and about two
 * line caps of text (256 lines of 8 MiB never sit in one batch).
 *
 * <p>Why pieces: the stream batches the lines of whole pipe reads (a 64 KiB read holds ~100 lines
 * of a harness's JSON) instead of one stream element per line; per-line elements through the
 * framing and batching stages were a fifth of the run's actor CPU (issue #15). A piece never weighs
 * more than a batch may, so batching pieces keeps the bound batching lines had.
 */
final class LineBatches {

  /** Lines of one chunk, in order, and their total weight (at most the batch's). */
  record Piece(List<LineFramer.Line> lines, long weight) {}

  private final long max;
  private final double bytesPerUnit;

  /**
   * @param batchMaxLines most lines (and most weight) in one batch, at least 1
   * @param lineCapBytes the line cap: a line this long weighs a whole batch
   */
  LineBatches(int batchMaxLines, int lineCapBytes) {
    if (batchMaxLines < 1) {
      throw new IllegalArgumentException("batchMaxLines must be at least 1");
    }
    this.max = batchMaxLines;
    this.bytesPerUnit = (double) lineCapBytes / batchMaxLines;
  }

  /** The most weight one batch holds. */
  long max() {
    return max;
  }

  /** Between 1 and {@link #max()}, growing with the line's length. */
  long weight(LineFramer.Line line) {
    return Math.max(1L, Math.min(max, (long) (line.text().length() / bytesPerUnit)));
  }

  /**
   * {@code lines} cut, in order, into the fewest consecutive pieces of at most {@link #max()}
   * weight each, filling each piece before starting the next; none for no lines.
   */
  List<Piece> pieces(List<LineFramer.Line> lines) {
    List<Piece> out = new ArrayList<>(1);
    int from = 0;
    long weight = 0;
    for (int i = 0; i < lines.size(); i++) {
      long w = weight(lines.get(i));
      if (weight + w > max) {
        out.add(new Piece(lines.subList(from, i), weight));
        from = i;
        weight = 0;
      }
      weight += w;
    }
    if (from < lines.size()) {
      out.add(new Piece(from == 0 ? lines : lines.subList(from, lines.size()), weight));
    }
    return out;
  }
}
