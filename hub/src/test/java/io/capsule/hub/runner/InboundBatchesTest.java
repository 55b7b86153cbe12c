package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.ws.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.TextMessage;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A socket's frames go to its gateway one by one while the brain keeps up, and, once {@link
 * RunnerGateway#IN_FLIGHT} batches wait for it, whatever arrives meanwhile goes as one batch (at
 * most 64 frames), in the order the runner sent it.
 */
class InboundBatchesTest {
  private final ActorTestKit kit = ActorTestKit.create();
  private final Materializer mat = Materializer.matFromSystem(kit.system());

  /** What the gateway was handed, in order, each with its answer. */
  private final BlockingQueue<List<Object>> batches = new LinkedBlockingQueue<>();

  private final BlockingQueue<CompletableFuture<RunnerGateway.Consumed>> answers =
      new LinkedBlockingQueue<>();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void framesThatArriveWhileEightBatchesWaitGoAsBatchesOfAtMost64InOrder() throws Exception {
    int frames = RunnerGateway.IN_FLIGHT + 100;
    // Read until a batch is full (64 frames); the rest waits in the socket.
    CountDownLatch read = new CountDownLatch(RunnerGateway.IN_FLIGHT + 64);
    Source.from(IntStream.rangeClosed(1, frames).mapToObj(InboundBatchesTest::ping).toList())
        .map(
            m -> {
              read.countDown();
              return m;
            })
        .runWith(
            RunnerEdge.inbound(
                ProtocolConfig.builder().build(),
                mat,
                batch -> {
                  batches.add(List.copyOf(batch));
                  CompletableFuture<RunnerGateway.Consumed> answer = new CompletableFuture<>();
                  answers.add(answer);
                  return answer;
                }),
            mat);
    // Nothing answered yet: the first eight went alone, the next 64 were read and wait.
    assertTrue(read.await(20, TimeUnit.SECONDS), "a full batch was read from the socket");
    List<Integer> seen = new ArrayList<>();
    for (int i = 1; i <= RunnerGateway.IN_FLIGHT; i++) {
      List<Object> batch = next();
      assertEquals(List.of(i), nonces(batch));
      seen.add(i);
    }
    answer();
    List<Object> ninth = next();
    assertEquals(64, ninth.size(), "one batch for what waited, up to its weight");
    seen.addAll(nonces(ninth));
    answer();
    List<Object> tenth = next();
    assertEquals(frames - RunnerGateway.IN_FLIGHT - 64, tenth.size());
    seen.addAll(nonces(tenth));
    assertEquals(IntStream.rangeClosed(1, frames).boxed().toList(), seen, "in order, each once");
    assertTrue(batches.isEmpty(), String.valueOf(batches));
  }

  private List<Object> next() throws InterruptedException {
    List<Object> batch = batches.poll(20, TimeUnit.SECONDS);
    assertNotNull(batch, "no batch reached the gateway within 20 s");
    return batch;
  }

  private void answer() throws InterruptedException {
    CompletableFuture<RunnerGateway.Consumed> oldest = answers.poll(20, TimeUnit.SECONDS);
    assertNotNull(oldest);
    oldest.complete(new RunnerGateway.Consumed("c-1"));
  }

  private static List<Integer> nonces(List<Object> batch) {
    return batch.stream()
        .map(f -> assertInstanceOf(Wire.Read.class, f))
        .map(r -> Integer.parseInt(assertInstanceOf(Ping.class, r.frame()).nonce()))
        .toList();
  }

  private static Message ping(int n) {
    return TextMessage.create("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"" + n + "\"}");
  }
}
