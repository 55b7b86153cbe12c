package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Heads and bodies read off a byte stream; chunked bodies copied as sent, the end found. */
class MessageReaderTest {

  /** A stream that hands out at most 3 bytes a read, so every boundary falls mid-read somewhere. */
  private static InputStream trickle(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
    return new ByteArrayInputStream(bytes) {
      @Override
      public synchronized int read(byte[] b, int off, int len) {
        return super.read(b, off, Math.min(len, 3));
      }
    };
  }

  private static String unescape(String row) {
    return row.replace("\\r", "\r").replace("\\n", "\n").replace("\\x01", "\u0001");
  }

  /** A chunked body, then "NEXT" (the next message): the copy is the body exactly. */
  @ParameterizedTest
  @CsvSource(
      delimiterString = "=>",
      textBlock =
          """
          0\\r\\n\\r\\n
          5\\r\\nhello\\r\\n0\\r\\n\\r\\n
          0005\\r\\nhello\\r\\n000\\r\\n\\r\\n
          5;name=value\\r\\nhello\\r\\n0 ;last\\r\\n\\r\\n
          a\\r\\n0123456789\\r\\n1\\r\\n!\\r\\n0\\r\\nX-Checksum: 7\\r\\nX-Other: 8\\r\\n\\r\\n
          """)
  void aChunkedBodyIsCopiedAsSentUpToItsEnd(String row) throws IOException {
    String body = unescape(row);
    MessageReader reader = new MessageReader(trickle(body + "NEXT"), 256);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    reader.copyBody(BodyFraming.CHUNKED, out, 256);
    assertEquals(body, out.toString(StandardCharsets.ISO_8859_1));
    assertEquals("NEXT", new String(readRest(reader), StandardCharsets.ISO_8859_1));
  }

  private static byte[] readRest(MessageReader reader) throws IOException {
    ByteArrayOutputStream rest = new ByteArrayOutputStream();
    reader.copyBody(BodyFraming.UNTIL_CLOSE, rest, 0);
    return rest.toByteArray();
  }

  /** Chunked bodies that must be refused, with what the refusal says. */
  @ParameterizedTest
  @CsvSource(
      delimiterString = "=>",
      textBlock =
          """
          zz\\r\\nnope\\r\\n0\\r\\n\\r\\n => without a hexadecimal size
          \\r\\n => without a hexadecimal size
          -5\\r\\nhello\\r\\n => without a hexadecimal size
          5 x\\r\\nhello\\r\\n => extensions
          5\\nhello\\r\\n0\\r\\n\\r\\n => does not end with CRLF
          5\\r\\nhelloXX0\\r\\n\\r\\n => longer than its size says
          11111111111111111\\r\\n => over 16 hex digits
          8000000000000000\\r\\n => past 2^63
          5;a\\x01b\\r\\nhello\\r\\n => a control character
          0\\r\\nX-T: 1\\n\\r\\n => does not end with CRLF
          """)
  void aMalformedChunkedBodyIsRefused(String row, String reason) {
    MessageReader reader = new MessageReader(trickle(unescape(row)), 256);
    MalformedHttp e =
        assertThrows(
            MalformedHttp.class,
            () -> reader.copyBody(BodyFraming.CHUNKED, new ByteArrayOutputStream(), 256));
    assertTrue(e.getMessage().contains(reason.strip()), e::getMessage);
  }

  @Test
  void aChunkSizeLineAndATrailerSectionAreBounded() {
    String longLine = "1;" + "x".repeat(MessageReader.CHUNK_LINE_CAP) + "\r\n";
    MalformedHttp line =
        assertThrows(
            MalformedHttp.class,
            () ->
                new MessageReader(trickle(longLine), 256)
                    .copyBody(BodyFraming.CHUNKED, new ByteArrayOutputStream(), 256));
    assertTrue(
        line.getMessage().contains("over " + MessageReader.CHUNK_LINE_CAP), line::getMessage);
    String trailers = "0\r\n" + "X-T: 1\r\n".repeat(40) + "\r\n";
    MalformedHttp trailer =
        assertThrows(
            MalformedHttp.class,
            () ->
                new MessageReader(trickle(trailers), 256)
                    .copyBody(BodyFraming.CHUNKED, new ByteArrayOutputStream(), 256));
    assertTrue(trailer.getMessage().contains("trailer section"), trailer::getMessage);
  }

  @Test
  void aBodyCutShortIsAnEndOfStreamNotABody() {
    assertThrows(
        EOFException.class,
        () ->
            new MessageReader(trickle("5\r\nhel"), 256)
                .copyBody(BodyFraming.CHUNKED, new ByteArrayOutputStream(), 256));
    assertThrows(
        EOFException.class,
        () ->
            new MessageReader(trickle("abc"), 256)
                .copyBody(new BodyFraming.Length(5), new ByteArrayOutputStream(), 256));
  }

  @Test
  void headsAreReadOneAfterAnotherWithTheBodyBetweenThem() throws IOException {
    MessageReader reader =
        new MessageReader(
            trickle(
                "\r\nPOST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\nX: 1\n\n"),
            256);
    MessageReader.Head.Read first =
        assertInstanceOf(MessageReader.Head.Read.class, reader.readHead(256));
    assertEquals(
        "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\n",
        new String(first.bytes(), StandardCharsets.ISO_8859_1));
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    reader.copyBody(new BodyFraming.Length(3), body, 256);
    assertArrayEquals("abc".getBytes(StandardCharsets.ISO_8859_1), body.toByteArray());
    MessageReader.Head.Read second =
        assertInstanceOf(MessageReader.Head.Read.class, reader.readHead(256));
    assertEquals(
        "GET /b HTTP/1.1\nX: 1\n\n", new String(second.bytes(), StandardCharsets.ISO_8859_1));
    assertInstanceOf(MessageReader.Head.End.class, reader.readHead(256));
  }

  @Test
  void aHeadOverTheCapIsTooLargeEvenWhenItIsOnlyEmptyLines() throws IOException {
    assertInstanceOf(
        MessageReader.Head.TooLarge.class,
        new MessageReader(trickle("GET / HTTP/1.1\r\nX: " + "a".repeat(300)), 256).readHead(256));
    assertInstanceOf(
        MessageReader.Head.TooLarge.class,
        new MessageReader(trickle("\r\n".repeat(200)), 256).readHead(256));
  }
}
