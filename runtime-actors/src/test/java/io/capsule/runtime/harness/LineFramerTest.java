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
            "a cut backs off to a character start",
            "ab\u20ac\n",
            SMALL_CAP,
            List.of(cut("ab", 5))));
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
