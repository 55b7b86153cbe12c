package io.capsule.hub.runner;

import io.capsule.protocol.ws.CloseCodes;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.http.impl.engine.ws.FrameData;
import org.apache.pekko.http.impl.engine.ws.FrameEvent;
import org.apache.pekko.http.impl.engine.ws.FrameHeader;
import org.apache.pekko.http.impl.engine.ws.FrameStart;
import org.apache.pekko.http.javadsl.model.ws.BinaryMessage;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.japi.function.Effect;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FanOutShape2;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.SubscriptionWithCancelException;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * Splits a server socket's incoming frames: data frames (text, binary, continuation) are unmasked
 * and assembled into whole {@link Message}s here, control frames (close, ping, pong) go on to Pekko
 * HTTP's WebSocket stack, which answers pings and runs the close handshake.
 *
 * <p>Why not Pekko's own message layer: it runs two substreams per message (a split and a
 * prefix-and-tail) and decodes text through its own UTF-8 decoder, and on the hub's runner socket
 * that was a fifth of the hub's CPU per persisted frame. Here a message is one array copy, one XOR
 * pass and, for text, one JDK decode (a plain copy for ASCII).
 *
 * <p>What the stack used to enforce on data frames is enforced here, with the same close codes: a
 * frame must be masked, carry no reserved bits and continue a message only when one is open (1002);
 * text must be UTF-8 (1007); a message whose frames add up to more than the cap is not read and the
 * socket closes with 1009 (the frame cap, {@code E-PRO-005}). After any of these nothing more is
 * read. A message is collected only as its bytes arrive (a declared length reserves nothing), so a
 * peer that announces large frames and sends nothing costs no memory.
 *
 * <p>Outlets: {@code out0} control frames for the stack, {@code out1} messages. The messages end at
 * the peer's close frame (nothing may follow it). When the messages' reader fails (its idle cut, a
 * timeout), the socket closes with 1011, as the stack did when its message handler failed.
 */
final class InboundFrames extends GraphStage<FanOutShape2<FrameEvent, FrameEvent, Message>> {
  /** RFC 6455 7.4.1: a frame that breaks the protocol (unmasked, reserved bits, bad sequence). */
  static final int PROTOCOL_ERROR = 1002;

  /** RFC 6455 7.4.1: a text message that is not UTF-8. */
  static final int INVALID_TEXT = 1007;

  private static final int CONTINUATION = 0;
  private static final int TEXT = 1;
  private static final int BINARY = 2;
  private static final int CLOSE = 8;

  /**
   * The first buffer of a message: most runner frames fit (they are a few hundred bytes to a few
   * KB); a larger message grows it as its bytes arrive, never ahead of them.
   */
  private static final int FIRST_BUFFER = 8 * 1024;

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final Inlet<FrameEvent> in = Inlet.create("InboundFrames.in");
  private final Outlet<FrameEvent> controlFrames = Outlet.create("InboundFrames.control");
  private final Outlet<Message> messages = Outlet.create("InboundFrames.messages");
  private final FanOutShape2<FrameEvent, FrameEvent, Message> shape =
      new FanOutShape2<>(in, controlFrames, messages);
  private final int cap;
  private final CompletableFuture<ServerSocket.Control> control;

  /**
   * @param cap the most bytes a message may have
   * @param control completed with the close a broken or oversized message calls for
   */
  InboundFrames(int cap, CompletableFuture<ServerSocket.Control> control) {
    this.cap = cap;
    this.control = control;
  }

  @Override
  public FanOutShape2<FrameEvent, FrameEvent, Message> shape() {
    return shape;
  }

  @Override
  public GraphStageLogic createLogic(Attributes attributes) {
    return new Logic();
  }

  private final class Logic extends GraphStageLogic {
    private final Effect pullIn = this::pullIn;

    /** The frame in progress is a data frame whose bytes are still arriving as FrameData. */
    private boolean inDataFrame;

    /** A data message is open: its final frame has not ended yet. */
    private boolean inMessage;

    private boolean binary;
    private boolean finalFrame;
    private int mask;
    private long maskOffset;

    /** Declared bytes of the open message's frames: checked against the cap. */
    private long declared;

    private byte[] buffer;
    private int length;

    /** Closing (over the cap, or a broken frame): nothing more is read or passed on. */
    private boolean closing;

    Logic() {
      super(shape);
      setHandler(
          in,
          new AbstractInHandler() {
            @Override
            public void onPush() {
              onFrameEvent(grab(in));
            }
          });
      setHandler(
          controlFrames,
          new AbstractOutHandler() {
            @Override
            public void onPull() {}

            @Override
            public void onDownstreamFinish(Throwable cause) {
              cancelStage(cause);
            }
          });
      setHandler(
          messages,
          new AbstractOutHandler() {
            @Override
            public void onPull() {}

            @Override
            public void onDownstreamFinish(Throwable cause) {
              if (!(cause instanceof SubscriptionWithCancelException.NonFailureCancellation)) {
                closing = true;
                buffer = null;
                control.complete(new ServerSocket.Close(CloseCodes.INTERNAL_ERROR, ""));
              }
            }
          });
    }

    @Override
    public void preStart() {
      pull(in);
    }

    private void pullIn() {
      if (!hasBeenPulled(in) && !isClosed(in)) {
        pull(in);
      }
    }

    private void onFrameEvent(FrameEvent e) {
      if (closing) {
        pullIn();
      } else if (e instanceof FrameStart start) {
        onFrameStart(start);
      } else if (inDataFrame) {
        FrameData data = (FrameData) e;
        append(data.data());
        if (data.lastPart()) {
          inDataFrame = false;
          endOfFrame();
        } else {
          pullIn();
        }
      } else {
        emit(controlFrames, e, pullIn); // the rest of a control frame
      }
    }

    private void onFrameStart(FrameStart start) {
      FrameHeader h = start.header();
      if (h.opcode().isControl()) {
        inDataFrame = false;
        emit(controlFrames, start, pullIn);
        if (h.opcode().code() == CLOSE) {
          complete(messages);
        }
        return;
      }
      int opcode = h.opcode().code();
      if (h.rsv1() || h.rsv2() || h.rsv3()) {
        close(PROTOCOL_ERROR, "reserved bits set, no extension was agreed");
        return;
      }
      if (h.mask().isEmpty()) {
        close(PROTOCOL_ERROR, "a client frame must be masked");
        return;
      }
      if (opcode == CONTINUATION) {
        if (!inMessage) {
          close(PROTOCOL_ERROR, "a continuation frame outside a message");
          return;
        }
      } else if (opcode == TEXT || opcode == BINARY) {
        if (inMessage) {
          close(PROTOCOL_ERROR, "a new message before the last one ended");
          return;
        }
        inMessage = true;
        binary = opcode == BINARY;
        declared = 0;
        length = 0;
        buffer = null;
      } else {
        close(PROTOCOL_ERROR, "unknown opcode " + opcode);
        return;
      }
      declared += h.length();
      if (declared > cap) {
        close(CloseCodes.TOO_BIG, "E-PRO-005 frame larger than " + cap + " bytes");
        return;
      }
      finalFrame = h.fin();
      mask = (Integer) h.mask().get();
      maskOffset = 0;
      append(start.data());
      if (start.lastPart()) {
        endOfFrame();
      } else {
        inDataFrame = true;
        pullIn();
      }
    }

    /** Copies the frame's next bytes into the message and unmasks them (RFC 6455 5.3). */
    private void append(ByteString data) {
      int n = data.length();
      if (buffer == null || buffer.length - length < n) {
        int need = length + n; // within the cap: declared lengths were checked
        // A final frame's message is exactly `declared` bytes: up to the first buffer's size
        // (allocated anyway) that size at once, so the message is the buffer itself, not a copy
        // out of 8 KB allocated and zeroed for a frame of a few hundred bytes.
        int size =
            finalFrame && declared <= FIRST_BUFFER
                ? (int) declared
                : Math.max(need, Math.min(cap, Math.max(FIRST_BUFFER, 2 * length)));
        buffer = Arrays.copyOf(buffer == null ? new byte[0] : buffer, size);
      }
      data.copyToBuffer(ByteBuffer.wrap(buffer, length, n));
      unmask(buffer, length, n, Integer.rotateLeft(mask, 8 * (int) (maskOffset & 3)));
      maskOffset += n;
      length += n;
    }

    private void endOfFrame() {
      if (!finalFrame) {
        pullIn(); // a continuation follows
        return;
      }
      inMessage = false;
      byte[] bytes =
          buffer == null
              ? new byte[0]
              : buffer.length == length ? buffer : Arrays.copyOf(buffer, length);
      buffer = null;
      Message m;
      if (binary) {
        m = BinaryMessage.create(ByteString.fromArrayUnsafe(bytes));
      } else {
        String text = utf8(bytes);
        if (text == null) {
          close(INVALID_TEXT, "a text message that is not UTF-8");
          return;
        }
        m = TextMessage.create(text);
      }
      if (isClosed(messages)) {
        pullIn();
      } else {
        emit(messages, m, pullIn);
      }
    }

    private void close(int code, String reason) {
      closing = true;
      buffer = null;
      control.complete(new ServerSocket.Close(code, reason));
      pullIn();
    }
  }

  /**
   * XORs {@code n} bytes from {@code from} with {@code mask}, its first byte on the first: eight
   * bytes at a time (the mask twice over a long), then the rest byte by byte.
   */
  static void unmask(byte[] bytes, int from, int n, int mask) {
    long mask8 = ((long) mask << 32) | (mask & 0xFFFFFFFFL);
    int end = from + n;
    int i = from;
    for (; i + 8 <= end; i += 8) {
      LONGS.set(bytes, i, (long) LONGS.get(bytes, i) ^ mask8);
    }
    for (int k = 0; i < end; i++, k++) {
      bytes[i] ^= (byte) (mask >>> (24 - 8 * (k & 3)));
    }
  }

  /** The text, or null when the bytes are not UTF-8. ASCII, the usual case, is a plain copy. */
  static String utf8(byte[] bytes) {
    for (byte b : bytes) {
      if (b < 0) {
        try {
          return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
          return null;
        }
      }
    }
    return new String(bytes, StandardCharsets.ISO_8859_1);
  }
}
