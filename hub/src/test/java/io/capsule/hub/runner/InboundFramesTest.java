package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.ws.CloseCodes;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The hub reads a runner's data frames itself ({@link InboundFrames}), so the frame rules Pekko's
 * message layer used to enforce are checked here, byte by byte over a real socket: fragments make
 * one message, control frames may come between them, and a broken frame closes the socket with the
 * RFC's code.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InboundFramesTest {
  private static final int CAP = 4096;
  private static final int TEXT = 1;
  private static final int BINARY = 2;
  private static final int CONTINUATION = 0;
  private static final int CLOSE = 8;
  private static final int PING = 9;
  private static final int PONG = 10;

  private final ActorTestKit kit = ActorTestKit.create();
  private HubServer hub;

  @BeforeAll
  void bind() throws Exception {
    hub =
        HubServer.create(
                kit.system(), WsFixture.fast().frameCapBytes(CAP).build(), WsFixture.TOKENS)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
  }

  @AfterAll
  void shutdown() throws Exception {
    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  @Test
  void aHelloInThreeFragmentsWithAPingBetweenThemIsReadAsOneMessage() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-frag", "r"))) {
      byte[] h = hello("p-frag", Capabilities.ACK).getBytes(StandardCharsets.UTF_8);
      int a = h.length / 3;
      int b = 2 * h.length / 3;
      s.send(TEXT, false, Arrays.copyOfRange(h, 0, a));
      s.send(PING, true, "are you there".getBytes(StandardCharsets.UTF_8));
      Frame pong = s.next();
      assertEquals(PONG, pong.opcode());
      assertEquals("are you there", pong.text());
      s.send(CONTINUATION, false, Arrays.copyOfRange(h, a, b));
      s.send(CONTINUATION, true, Arrays.copyOfRange(h, b, h.length));
      Frame ack = s.nextData();
      assertTrue(ack.text().contains("\"type\":\"ack\""), ack.text());
    }
  }

  @Test
  void aTextMessageInUtf8BeyondAsciiIsReadAsText() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-utf8", "r"))) {
      s.send(TEXT, true, hello("p-utf8", "error-frames").getBytes(StandardCharsets.UTF_8));
      // A ping whose nonce holds a two-byte, a three-byte and a four-byte character, split
      // inside the four-byte one: the pong gives the same nonce back.
      byte[] ping =
          "{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"é€😀\"}"
              .getBytes(StandardCharsets.UTF_8);
      String text = new String(ping, StandardCharsets.UTF_8);
      int inside =
          text.substring(0, text.indexOf("😀")).getBytes(StandardCharsets.UTF_8).length + 2;
      s.send(TEXT, false, Arrays.copyOfRange(ping, 0, inside));
      s.send(CONTINUATION, true, Arrays.copyOfRange(ping, inside, ping.length));
      Pong pong = (Pong) FrameCodec.shared().decode(s.nextData().text(), false);
      assertEquals("é€😀", pong.nonce());
    }
  }

  @Test
  void aBinaryMessageIsRefusedWithAnErrorFrameAndTheConnectionStays() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-bin", "r"))) {
      s.send(TEXT, true, hello("p-bin", "error-frames").getBytes(StandardCharsets.UTF_8));
      s.send(BINARY, true, new byte[] {1, 2, 3});
      Frame error = s.nextData();
      assertTrue(error.text().contains("E-PRO-001"), error.text());
      s.send(TEXT, true, ping("still-here"));
      assertTrue(s.nextData().text().contains("still-here"));
    }
  }

  @Test
  void aTextMessageThatIsNotUtf8ClosesWith1007() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-bad-utf8", "r"))) {
      s.send(TEXT, true, hello("p-bad-utf8").getBytes(StandardCharsets.UTF_8));
      byte[] bad = ping("x");
      bad[bad.length - 3] = (byte) 0xC3; // a lead byte followed by '"', not a continuation
      s.send(TEXT, true, bad);
      assertEquals(InboundFrames.INVALID_TEXT, s.awaitClose());
    }
  }

  @Test
  void anUnmaskedFrameClosesWith1002() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-unmasked", "r"))) {
      s.sendUnmasked(TEXT, hello("p-unmasked").getBytes(StandardCharsets.UTF_8));
      assertEquals(InboundFrames.PROTOCOL_ERROR, s.awaitClose());
    }
  }

  @Test
  void aContinuationOutsideAMessageClosesWith1002() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-cont", "r"))) {
      s.send(CONTINUATION, true, ping("n"));
      assertEquals(InboundFrames.PROTOCOL_ERROR, s.awaitClose());
    }
  }

  @Test
  void aNewMessageInsideAnOpenOneClosesWith1002() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-nested", "r"))) {
      s.send(TEXT, false, "{\"type\":".getBytes(StandardCharsets.UTF_8));
      s.send(TEXT, true, ping("n"));
      assertEquals(InboundFrames.PROTOCOL_ERROR, s.awaitClose());
    }
  }

  @Test
  void fragmentsEachUnderTheCapButTogetherOverItCloseWith1009() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-frag-big", "r"))) {
      byte[] part = new byte[CAP / 2 + 1];
      Arrays.fill(part, (byte) 'x');
      s.send(TEXT, false, part);
      s.send(CONTINUATION, true, part);
      assertEquals(CloseCodes.TOO_BIG, s.awaitClose());
    }
  }

  @Test
  void aCloseFromTheRunnerIsAnsweredWithAClose() throws Exception {
    try (RawSocket s = RawSocket.open(hub.url(), token("p-close", "r"))) {
      s.send(TEXT, true, hello("p-close", Capabilities.ACK).getBytes(StandardCharsets.UTF_8));
      assertTrue(s.nextData().text().contains("\"type\":\"ack\""));
      s.send(CLOSE, true, new byte[] {0x03, (byte) 0xE8}); // 1000
      assertEquals(CloseCodes.NORMAL, s.awaitClose());
    }
  }

  private static byte[] ping(String nonce) {
    return ("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"" + nonce + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  record Frame(int opcode, byte[] payload) {
    String text() {
      return new String(payload, StandardCharsets.UTF_8);
    }
  }

  /**
   * A WebSocket client written out byte by byte (RFC 6455), so a test can send what no library
   * would: unmasked frames, broken UTF-8, continuations out of place.
   */
  static final class RawSocket implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    private RawSocket(Socket socket) throws IOException {
      this.socket = socket;
      this.in = new DataInputStream(socket.getInputStream());
      this.out = socket.getOutputStream();
    }

    static RawSocket open(String url, String token) throws IOException {
      URI u = URI.create(url);
      Socket socket = new Socket(u.getHost(), u.getPort());
      socket.setSoTimeout((int) WsFixture.WAIT.toMillis());
      RawSocket s = new RawSocket(socket);
      String request =
          "GET "
              + u.getPath()
              + " HTTP/1.1\r\nHost: "
              + u.getHost()
              + ":"
              + u.getPort()
              + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
              + "Authorization: Bearer "
              + token
              + "\r\n\r\n";
      s.out.write(request.getBytes(StandardCharsets.US_ASCII));
      s.out.flush();
      String head = s.readHead();
      if (!head.startsWith("HTTP/1.1 101")) {
        throw new IOException("no upgrade: " + head);
      }
      return s;
    }

    private String readHead() throws IOException {
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      int matched = 0;
      byte[] end = {'\r', '\n', '\r', '\n'};
      while (matched < 4) {
        int b = in.read();
        if (b < 0) {
          throw new IOException("closed during the handshake: " + head);
        }
        head.write(b);
        matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
      }
      return head.toString(StandardCharsets.US_ASCII);
    }

    void send(int opcode, boolean fin, byte[] payload) throws IOException {
      write(opcode, fin, payload, new byte[] {0x12, 0x34, 0x56, 0x78});
    }

    void sendUnmasked(int opcode, byte[] payload) throws IOException {
      write(opcode, true, payload, null);
    }

    private void write(int opcode, boolean fin, byte[] payload, byte[] mask) throws IOException {
      ByteArrayOutputStream f = new ByteArrayOutputStream();
      f.write((fin ? 0x80 : 0) | opcode);
      int maskBit = mask == null ? 0 : 0x80;
      if (payload.length < 126) {
        f.write(maskBit | payload.length);
      } else {
        f.write(maskBit | 126);
        f.write(payload.length >>> 8);
        f.write(payload.length & 0xFF);
      }
      if (mask != null) {
        f.write(mask);
        byte[] masked = payload.clone();
        for (int i = 0; i < masked.length; i++) {
          masked[i] ^= mask[i & 3];
        }
        f.write(masked);
      } else {
        f.write(payload);
      }
      out.write(f.toByteArray());
      out.flush();
    }

    Frame next() throws IOException {
      int b0 = in.readUnsignedByte();
      int b1 = in.readUnsignedByte();
      long len = b1 & 0x7F;
      if (len == 126) {
        len = in.readUnsignedShort();
      } else if (len == 127) {
        len = in.readLong();
      }
      byte[] payload = new byte[(int) len];
      in.readFully(payload);
      return new Frame(b0 & 0x0F, payload);
    }

    /** The next text frame, skipping the hub's heartbeat pings (protocol pings, as text). */
    Frame nextData() throws IOException {
      while (true) {
        Frame f = next();
        if (f.opcode() == TEXT && !f.text().contains("\"type\":\"ping\"")) {
          return f;
        }
      }
    }

    /** Reads until the hub's close frame: its code. */
    int awaitClose() throws IOException {
      while (true) {
        Frame f = next();
        if (f.opcode() == CLOSE) {
          return ((f.payload()[0] & 0xFF) << 8) | (f.payload()[1] & 0xFF);
        }
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
