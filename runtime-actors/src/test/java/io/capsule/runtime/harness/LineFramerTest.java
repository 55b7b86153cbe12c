package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Spec table for docs/run-semantics.md §5 framing; every row is also fed split at every byte. */
class LineFramerTest {

  private static final int SMALL_CAP = 4;

  /** Marks a cut line in the expectations: the text, then "|cut:" and the original length. */
  private static String cut(String text, long original) {
    return text + "|cut:" + original;
  }

  static Stream<Arguments> table() {
    return Stream.concat(handWritten(), wordRows());
  }

  private static Stream<Arguments> handWritten() {
    return Stream.of(
        Arguments.of("one line", "abc\n", 64, List.of("abc")),
        Arguments.of("two lines", "a\nb\n", 64, List.of("a", "b")),
        Arguments.of("crlf drops the one cr", "a\r\nb\r\n", 64, List.of("a", "b")),
        Arguments.of("only one cr is dropped", "a\r\r\n", 64, List.of("a\r")),
        Arguments.of("a lone cr inside a line stays", "a\rb\n", 64, List.of("a\rb")),
        Arguments.of("empty lines are kept", "\n\r\n\n", 64, List.of("", "", "")),
        Arguments.of("the unterminated tail is dropped", "a\nbc", 64, List.of("a")),
        Arguments.of("no newline at all gives nothing", "abc", 64, List.of()),
        Arguments.of(
            "multi-byte utf-8 survives",
            "h\u00e9\u20ac\uD83D\uDE00\n",
            64,
            List.of("h\u00e9\u20ac\uD83D\uDE00")),
        Arguments.of("a line of exactly the cap is whole", "abcd\n", SMALL_CAP, List.of("abcd")),
        Arguments.of("a cap line with crlf is whole", "abcd\r\n", SMALL_CAP, List.of("abcd")),
        Arguments.of("one byte over the cap is cut", "abcde\n", SMALL_CAP, List.of(cut("abcd", 5))),
        Arguments.of(
            "a long line is cut and the rest skipped",
            "abcdefghij\r\nxy\n",
            SMALL_CAP,
            List.of(cut("abcd", 10), "xy")),
        Arguments.of(
            "a cut line that never ends is dropped", "ok\nabcdefgh", SMALL_CAP, List.of("ok")),
        Arguments.of(
            "a cut backs off to a character start", "ab\u20ac\n", SMALL_CAP, List.of(cut("ab", 5))),
        Arguments.of(
            "newlines on both sides of a word boundary",
            "abcdefg\n\nhijklmnopqrstu\nv\n",
            64,
            List.of("abcdefg", "", "hijklmnopqrstu", "v")),
        Arguments.of(
            "bytes next to a newline's value are not newlines",
            "\u000b\t\u000b\t\u000b\t\u000b\t\u000b\t\n",
            64,
            List.of("\u000b\t\u000b\t\u000b\t\u000b\t\u000b\t")),
        Arguments.of(
            "a cr ending a word, its lf starting the next",
            "abcdefg\r\nhi\n",
            64,
            List.of("abcdefg", "hi")));
  }

  /**
   * The 8-byte newline scan: a newline at every offset 0–15 of a chunk (so in the first and the
   * second word, and in the bytes after the last whole word), after a line ending at a word's last
   * byte, with CRLF, and as a line of exactly the cap and of one byte over it. The table test feeds
   * each split at every byte too, which puts the newline at every offset of the second chunk and
   * across chunk ends.
   */
  private static Stream<Arguments> wordRows() {
    List<Arguments> rows = new ArrayList<>();
    for (int k = 0; k < 16; k++) {
      String a = "a".repeat(k);
      String tail = "z".repeat(16 - k);
      rows.add(Arguments.of("lf at offset " + k, a + "\n" + tail + "\n", 64, List.of(a, tail)));
      rows.add(
          Arguments.of(
              "lf at offset " + k + " after an 8-byte line",
              "1234567\n" + a + "\n",
              64,
              List.of("1234567", a)));
      if (k > 0) {
        String c = "c".repeat(k - 1);
        rows.add(
            Arguments.of("crlf with its lf at offset " + k, c + "\r\nx\n", 64, List.of(c, "x")));
        rows.add(
            Arguments.of(
                "a line of the cap with its lf at offset " + k, a + "\ny\n", k, List.of(a, "y")));
      }
      if (k > 1) {
        String c = "c".repeat(k - 1);
        rows.add(
            Arguments.of(
                "a cap line with crlf, its lf at offset " + k, c + "\r\n", k - 1, List.of(c)));
        rows.add(
            Arguments.of(
                "one byte over the cap with its lf at offset " + k,
                a + "\n",
                k - 1,
                List.of(cut("a".repeat(k - 1), k))));
      }
    }
    return rows.stream();
  }

  @Test
  void theWordScanFindsTheFirstNewlineWhateverSurroundsIt() {
    for (int len = 0; len <= 40; len++) {
      for (int at = -1; at < len; at++) {
        for (int filler = 0; filler < 256; filler++) {
          if (filler == '\n') {
            continue;
          }
          byte[] bytes = new byte[len + 3];
          Arrays.fill(bytes, (byte) filler);
          bytes[0] = '\n'; // before the range: never read as in it
          bytes[len + 1] = '\n'; // just past the range's end: never read as in it
          if (at >= 0) {
            bytes[at + 1] = '\n';
            if (at + 2 <= len) {
              bytes[at + 2] = '\n'; // a second one after it must not win
            }
          }
          int expected = at < 0 ? -1 : at + 1;
          assertEquals(
              expected,
              LineFramer.indexOfNewline(bytes, 1, len + 1),
              "length " + len + ", newline at " + at + ", filler " + filler);
        }
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void framesTheStreamAsTheSpecSays(String name, String input, int cap, List<String> expected) {
    byte[] bytes = input.getBytes(StandardCharsets.UTF_8);
    assertEquals(expected, render(frameWhole(bytes, cap)), "whole");
    for (int split = 0; split <= bytes.length; split++) {
      assertEquals(expected, render(frameSplit(bytes, cap, split)), "split at " + split);
    }
    assertEquals(expected, render(frameByteByByte(bytes, cap)), "byte by byte");
  }

  @Test
  void invalidUtf8BecomesReplacementCharacters() {
    byte[] bytes = {(byte) 0xff, 'a', (byte) 0xc3, '\n', (byte) 0xe2, (byte) 0x82, '\n'};
    assertEquals(List.of("\uFFFDa\uFFFD", "\uFFFD"), render(frameByteByByte(bytes, 64)));
    assertEquals(List.of("\uFFFDa\uFFFD", "\uFFFD"), render(frameWhole(bytes, 64)));
  }

  @Test
  void pendingBytesCountWhatEofWouldDrop() {
    LineFramer framer = new LineFramer(4);
    framer.feed("a\nxyz".getBytes(StandardCharsets.UTF_8));
    assertEquals(3, framer.pendingBytes());
    framer.feed("pqrstu".getBytes(StandardCharsets.UTF_8));
    assertEquals(9, framer.pendingBytes());
    framer.feed("\n".getBytes(StandardCharsets.UTF_8));
    assertEquals(0, framer.pendingBytes());
  }

  @Test
  void aHugeLineIsCutWithoutBufferingItAll() {
    int cap = 1024;
    LineFramer framer = new LineFramer(cap);
    byte[] chunk = new byte[64 * 1024];
    Arrays.fill(chunk, (byte) 'x');
    List<LineFramer.Line> lines = new ArrayList<>();
    for (int i = 0; i < 320; i++) { // 20 MiB
      lines.addAll(framer.feed(chunk));
    }
    lines.addAll(framer.feed(new byte[] {'\n', 'o', 'k', '\n'}));
    assertEquals(2, lines.size());
    assertEquals(cap, lines.get(0).text().length());
    assertEquals(20L * 1024 * 1024, lines.get(0).originalBytes());
    assertEquals("ok", lines.get(1).text());
  }

  @Test
  void aLineWholeInOneChunkIsNotCopiedIntoTheBuffer() {
    LineFramer framer = new LineFramer(1024 * 1024);
    int before = framer.bufferCapacity();
    byte[] chunk = new byte[100 * 1024 + 3];
    Arrays.fill(chunk, (byte) 'x');
    chunk[100 * 1024] = '\n';
    chunk[100 * 1024 + 1] = 'o';
    chunk[100 * 1024 + 2] = 'k';
    List<LineFramer.Line> lines = framer.feed(chunk);
    assertEquals(1, lines.size());
    assertEquals("x".repeat(100 * 1024), lines.get(0).text());
    assertEquals(before, framer.bufferCapacity(), "the 100 KiB line went through the buffer");
    assertEquals(List.of("ok"), render(framer.feed(new byte[] {'\n'})));
  }

  @Test
  void aCapBelowOneByteIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new LineFramer(0));
  }

  private static List<LineFramer.Line> frameWhole(byte[] bytes, int cap) {
    return new LineFramer(cap).feed(bytes);
  }

  private static List<LineFramer.Line> frameSplit(byte[] bytes, int cap, int split) {
    LineFramer framer = new LineFramer(cap);
    List<LineFramer.Line> out = new ArrayList<>(framer.feed(bytes, 0, split));
    out.addAll(framer.feed(bytes, split, bytes.length - split));
    return out;
  }

  private static List<LineFramer.Line> frameByteByByte(byte[] bytes, int cap) {
    LineFramer framer = new LineFramer(cap);
    List<LineFramer.Line> out = new ArrayList<>();
    for (int i = 0; i < bytes.length; i++) {
      out.addAll(framer.feed(bytes, i, 1));
    }
    return out;
  }

  private static List<String> render(List<LineFramer.Line> lines) {
    return lines.stream()
        .map(l -> l.isCut() ? cut(l.text(), l.originalBytes()) : l.text())
        .toList();
  }
}
