package io.capsule.bench.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Runner-protocol frames per second: encode, decode, and decode + JSON-Schema validation of a
 * realistic {@code task.progress} frame, each beside bare Jackson ({@code writeValueAsBytes} of the
 * same tree, {@code readTree} of the same bytes) in the same run, so the ratio is what the codec
 * adds; and {@link SeqState} emit + receive operations per second (one op = one frame numbered on
 * the sender and applied on the receiver, acked every 64 frames as the hub does).
 *
 * <p>{@code kind}: {@code tool} is a ~600-byte tool-result frame with a nested payload, {@code
 * text} a ~200-byte text delta: the two shapes that dominate a run's traffic.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ProtocolBench {

  static final String TOOL =
      "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T-2026-1129-0042\",\"seq\":4711,"
          + "\"kind\":\"tool\",\"payload\":{\"phase\":\"result\",\"call_id\":"
          + "\"toolu_01HqR7x3mWmS9bYkD2f4pLcN\",\"name\":\"Read\",\"input\":{\"file_path\":"
          + "\"/work/project/src/main/java/io/example/billing/InvoiceService.java\",\"offset\":120,"
          + "\"limit\":80},\"is_error\":false,\"output_bytes\":6214,\"summary\":\"Read 80 lines of"
          + " InvoiceService.java (lines 120-199): the retry loop around the ledger client and the"
          + " idempotency key check\",\"duration_ms\":37,\"turn\":3,\"usage\":{\"cache_read\":48211,"
          + "\"cache_write\":1290,\"fresh_input\":312,\"output\":188,\"thinking\":0}},"
          + "\"trace\":{\"span\":\"a1b2c3d4\",\"at\":\"2026-11-29T22:41:07.123Z\"}}";

  static final String TEXT =
      "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T-2026-1129-0042\",\"seq\":4712,"
          + "\"kind\":\"text\",\"payload\":{\"delta\":\"The retry loop re-reads the ledger before"
          + " each attempt, so a duplicate charge cannot happen.\",\"turn\":3}}";

  @Param({"tool", "text"})
  public String kind;

  private final FrameCodec codec = FrameCodec.shared();
  private final ObjectMapper jackson = new ObjectMapper();
  private byte[] bytes;
  private Frame frame;
  private JsonNode tree;

  private SeqState sender;
  private SeqState receiver;
  private TaskProgress unsent;
  private int sinceAck;

  @Setup
  public void setup() throws Exception {
    bytes = (kind.equals("tool") ? TOOL : TEXT).getBytes(StandardCharsets.UTF_8);
    frame = codec.decode(bytes, true);
    tree = jackson.readTree(bytes);
    sender = new SeqState(65_536, 1_024, 10_000);
    receiver = new SeqState(65_536, 1_024, 10_000);
    unsent = ((TaskProgress) frame).withSeq(0);
  }

  @Benchmark
  public byte[] encode() {
    return codec.encode(frame);
  }

  @Benchmark
  public byte[] jacksonWriteValueAsBytes() throws Exception {
    return jackson.writeValueAsBytes(tree);
  }

  @Benchmark
  public Frame decode() {
    return codec.decode(bytes, false);
  }

  @Benchmark
  public Frame decodeValidate() {
    return codec.decode(bytes, true);
  }

  @Benchmark
  public JsonNode jacksonReadTree() throws Exception {
    return jackson.readTree(bytes);
  }

  @Benchmark
  public Receipt seqEmitReceive() {
    Receipt r = receiver.receive(sender.emit(unsent));
    if (++sinceAck == 64) {
      sinceAck = 0;
      sender.ack(receiver.takeAckMap());
    }
    return r;
  }
}
