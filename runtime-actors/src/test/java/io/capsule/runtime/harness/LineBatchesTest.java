package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A batch of at most 4 weight with a 400-byte cap: a line weighs its length / 100, at least 1 and
 * at most 4. Rows: the lines' lengths, then the pieces as their lines' lengths.
 */
class LineBatchesTest {

  private static final LineBatches BATCHES = new LineBatches(4, 400);

  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ''                     | ''
          5                      | 5
          5 5 5 5                | 5 5 5 5
          5 5 5 5 5              | 5 5 5 5 / 5
          5 5 5 5 5 5 5 5 5      | 5 5 5 5 / 5 5 5 5 / 5
          199 5 5 5              | 199 5 5 5
          200 5 5                | 200 5 5
          200 5 5 5              | 200 5 5 / 5
          300 100                | 300 100
          300 200                | 300 / 200
          400 5                  | 400 / 5
          5 400 5                | 5 / 400 / 5
          900000 900000          | 900000 / 900000
          0 0 0 0 0              | 0 0 0 0 / 0
          """)
  void cutsAChunksLinesIntoTheFewestPiecesThatEachFitABatch(String lengths, String pieces) {
    List<LineFramer.Line> lines = lines(lengths);
    List<LineBatches.Piece> out = BATCHES.pieces(lines);
    List<String> shown = new ArrayList<>();
    List<LineFramer.Line> joined = new ArrayList<>();
    for (LineBatches.Piece p : out) {
      assertTrue(p.weight() <= 4, "a piece over the batch's weight: " + p);
      assertEquals(p.lines().stream().mapToLong(BATCHES::weight).sum(), p.weight());
      shown.add(String.join(" ", p.lines().stream().map(l -> "" + l.text().length()).toList()));
      joined.addAll(p.lines());
    }
    assertEquals(pieces, String.join(" / ", shown));
    assertEquals(lines, joined); // every line, once, in order
  }

  @ParameterizedTest(name = "[{index}] {0} chars weigh {1}")
  @CsvSource({"0, 1", "99, 1", "100, 1", "199, 1", "200, 2", "399, 3", "400, 4", "5000000, 4"})
  void aLineWeighsItsShareOfTheCapBetweenOneAndAWholeBatch(int length, long weight) {
    assertEquals(weight, BATCHES.weight(new LineFramer.Line("x".repeat(length), 0)));
  }

  @Test
  void aChunkThatFitsOneBatchIsOnePieceOfTheSameList() {
    List<LineFramer.Line> lines = lines("1 2 3");
    assertSame(lines, BATCHES.pieces(lines).get(0).lines());
  }

  @Test
  void theDefaultBatchHoldsAtMost256LinesAndNoMoreThanTwoCapsOfText() {
    int cap = 8 * 1024 * 1024;
    LineBatches spec = new LineBatches(256, cap);
    List<LineFramer.Line> small =
        lines(String.join(" ", java.util.Collections.nCopies(600, "620")));
    List<LineBatches.Piece> pieces = spec.pieces(small);
    assertEquals(List.of(256, 256, 88), pieces.stream().map(p -> p.lines().size()).toList());
    LineFramer.Line half = new LineFramer.Line("x".repeat(cap / 2), 0);
    List<LineBatches.Piece> big = spec.pieces(List.of(half, half, half, half, half));
    big.forEach(
        p -> assertTrue(p.lines().stream().mapToLong(l -> l.text().length()).sum() <= 2L * cap));
  }

  @Test
  void aBatchOfNoLinesIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new LineBatches(0, 400));
  }

  private static List<LineFramer.Line> lines(String lengths) {
    return Arrays.stream(lengths.trim().split(" "))
        .filter(s -> !s.isEmpty())
        .map(s -> new LineFramer.Line("x".repeat(Integer.parseInt(s)), 0))
        .toList();
  }
}
