package io.capsule.protocol.ws;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.seq.SeqState;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;

/** Frames to WebSocket messages and back, shared by both ends. */
public final class Wire {
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final AtomicLong NONCES = new AtomicLong();

  private Wire() {}

  public static Message text(Frame frame) {
    return TextMessage.create(CODEC.encodeToString(frame));
  }

  /**
   * The frame as a message, refused before it is sent when it is above the peer's {@code cap}: the
   * peer would close the connection with 1009 and the replay after the reconnect would bring the
   * same frame again, wedging the connection for every task on it.
   *
   * @throws FrameRejected {@code E-PRO-005}
   */
  public static Message capped(SequencedFrame frame, int cap) {
    byte[] bytes = CODEC.encode(frame);
    if (bytes.length > cap) {
      throw new FrameRejected(
          Code.E_PRO_005,
          "a "
              + frame.type()
              + " frame of task "
              + frame.taskId()
              + " would be "
              + bytes.length
              + " bytes, above the frame cap of "
              + cap
              + "; it was not sent (the peer would refuse it with 1009)");
    }
    return TextMessage.create(new String(bytes, StandardCharsets.UTF_8));
  }

  /**
   * {@link #capped} for the frame numbered as {@code seq} will number it next: call before {@link
   * SeqState#emit}, so a refused frame takes no seq, and send the message emit's frame would make.
   */
  public static Message cappedNext(SeqState seq, SequencedFrame frame, int cap) {
    return capped(frame.withSeq(seq.lastEmitted(frame.taskId()) + 1), cap);
  }

  /** A heartbeat ping with a fresh nonce. */
  public static Message ping() {
    return text(new Ping(Long.toString(NONCES.incrementAndGet())));
  }

  /**
   * Reads each message as one frame: elements are {@link Frame}s or {@link FrameRejected}s (a
   * refused frame is data, not a stream failure). A text message above {@code cap} bytes fails the
   * stream ({@code E-PRO-005}); binary messages are refused ({@code E-PRO-001}).
   */
  public static Flow<Message, Object, NotUsed> decode(int cap, boolean validate, Materializer mat) {
    return Flow.<Message>create()
        .mapAsync(1, m -> strictText(m, cap, mat))
        .map(
            text -> {
              if (text instanceof FrameRejected r) {
                return r;
              }
              try {
                return CODEC.decode(((String) text).getBytes(StandardCharsets.UTF_8), validate);
              } catch (FrameRejected r) {
                return r;
              }
            });
  }

  /** A frame as {@link #decodeKeepingText} read it, with the message's text it came from. */
  public record Read(Frame frame, String text) {}

  /**
   * {@link #decode} (validated), but each frame comes as a {@link Read} with the text it was
   * decoded from, so a reader that must pass the frame on as text (the hub's edge to its brain,
   * which may run on another node) does not encode it again; refusals still come as {@link
   * FrameRejected}s.
   */
  public static Flow<Message, Object, NotUsed> decodeKeepingText(int cap, Materializer mat) {
    return Flow.<Message>create()
        .mapAsync(1, m -> strictText(m, cap, mat))
        .map(
            text -> {
              if (text instanceof FrameRejected r) {
                return r;
              }
              String s = (String) text;
              try {
                return new Read(CODEC.decode(s.getBytes(StandardCharsets.UTF_8), true), s);
              } catch (FrameRejected r) {
                return r;
              }
            });
  }

  /**
   * A {@code task.assign} that failed its schema check ({@code why}, {@code E-PRO-004}) but whose
   * task id, role, invocation and seq could still be read. The runner sequences it like any assign
   * and refuses it as that task's failure: dropped, the task would stay assigned forever and the
   * hub would send it again after every restart.
   */
  public record InvalidAssign(TaskAssign assign, FrameRejected why) {}

  /**
   * {@link #decode} as the runner reads the hub's frames (validated), except that an assign the
   * schema refuses but whose structure can be read comes as an {@link InvalidAssign}.
   */
  public static Flow<Message, Object, NotUsed> decodeAtRunner(int cap, Materializer mat) {
    return Flow.<Message>create()
        .mapAsync(1, m -> strictText(m, cap, mat))
        .map(
            text -> {
              if (text instanceof FrameRejected r) {
                return r;
              }
              byte[] bytes = ((String) text).getBytes(StandardCharsets.UTF_8);
              try {
                return CODEC.decode(bytes, true);
              } catch (FrameRejected r) {
                return readableAssign(bytes, r);
              }
            });
  }

  /** The assign behind a schema refusal, when its structure can be read; else the refusal. */
  private static Object readableAssign(byte[] bytes, FrameRejected r) {
    if (r.diagnostic().code() != Code.E_PRO_004) {
      return r;
    }
    try {
      return CODEC.decode(bytes, false) instanceof TaskAssign a ? new InvalidAssign(a, r) : r;
    } catch (FrameRejected unreadable) {
      return r; // no task id or seq to report against: nothing to do but refuse the frame
    }
  }

  private static CompletionStage<Object> strictText(Message m, int cap, Materializer mat) {
    if (!m.isText()) {
      m.asBinaryMessage().getStreamedData().runWith(Sink.ignore(), mat);
      return CompletableFuture.completedFuture(
          new FrameRejected(Code.E_PRO_001, "binary messages are not part of the protocol"));
    }
    TextMessage t = m.asTextMessage();
    if (t.isStrict()) {
      return CompletableFuture.completedFuture(checked(t.getStrictText(), cap));
    }
    return t.getStreamedText()
        .runFold(
            new StringBuilder(),
            (sb, part) -> {
              sb.append(part);
              checked(sb, cap);
              return sb;
            },
            mat)
        .thenApply(StringBuilder::toString);
  }

  private static <S extends CharSequence> S checked(S text, int cap) {
    // A char is at least one UTF-8 byte: the length is a lower bound of the byte size; the exact
    // byte count is only needed near the cap.
    if (text.length() > cap
        || (text.length() * 3L > cap
            && text.toString().getBytes(StandardCharsets.UTF_8).length > cap)) {
      throw new FrameRejected(Code.E_PRO_005, "a frame is larger than " + cap + " bytes");
    }
    return text;
  }
}
