package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.token.TokenSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hello a real {@code capsule runner} node sends over a real loopback WebSocket announces its
 * capsules and slots (protocol/README.md, "What a runner announces"). The server here only records
 * the first frame: what is tested is what the runner puts on the wire, not any hub's handling.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RunnerHelloTest {

  @TempDir Path capsules;

  @Test
  void theHelloAnnouncesEachCapsuleFolderAndTheMaxRunsAsSlots() throws Exception {
    TestCapsules.copyHello(capsules);
    TestCapsules.capsule(capsules, "slow", TestCapsules.slowHarness());
    Files.createDirectories(capsules.resolve("no-manifest")); // not a capsule: no murmur.yaml
    Path badName = Files.createDirectories(capsules.resolve("Bad_Name")); // not a capsule name
    Files.copy(capsules.resolve("hello/murmur.yaml"), badName.resolve("murmur.yaml"));
    Files.writeString(capsules.resolve("loose-file"), "x");

    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "runner-hello");
    CompletableFuture<String> firstFrame = new CompletableFuture<>();
    RunnerNode runner = null;
    try {
      Materializer mat = Materializer.matFromSystem(system);
      ServerBinding binding =
          Http.get(system)
              .newServerAt("127.0.0.1", 0)
              .bindSync(request -> recordFirstFrame(request, firstFrame, mat))
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS);
      String url = "ws://127.0.0.1:" + binding.localAddress().getPort() + "/v1/runner";
      runner =
          RunnerNode.start(
              system,
              CapsuleSettings.load(),
              url,
              "demo",
              TokenSource.fixed("not.checked.here"),
              capsules,
              3,
              s -> {},
              n -> {});
      Hello hello = (Hello) FrameCodec.shared().decode(firstFrame.get(30, TimeUnit.SECONDS), true);

      assertEquals(
          List.of(
              Capabilities.ACK,
              Capabilities.ERROR_FRAMES,
              "capsule:hello",
              "capsule:slow",
              "slots:3"),
          hello.capabilities());
      Capabilities.Announced announced = Capabilities.announced(hello.capabilities());
      assertEquals(List.of("hello", "slow"), List.copyOf(announced.capsules()));
      assertEquals(3, announced.slots());
      binding.terminate(Duration.ofSeconds(3)).toCompletableFuture().get(10, TimeUnit.SECONDS);
    } finally {
      if (runner != null) {
        runner.close();
      }
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void moreMaxRunsThanASlotAnnouncementMayCarryIsAUsageError() throws Exception {
    Path token = Files.writeString(capsules.resolve("token"), "a.b.c");
    Cli.Result r =
        Cli.run(
            "runner",
            "--hub",
            "ws://127.0.0.1:9/v1/runner",
            "--token-file",
            token.toString(),
            "--capsules",
            capsules.toString(),
            "--project",
            "demo",
            "--max-runs",
            "4097");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().contains("--max-runs must be 1..4096"), r.err());
  }

  private static HttpResponse recordFirstFrame(
      HttpRequest request, CompletableFuture<String> first, Materializer mat) {
    var upgrade = request.getAttribute(AttributeKeys.webSocketUpgrade);
    if (upgrade.isEmpty()) {
      return HttpResponse.create().withStatus(StatusCodes.BAD_REQUEST);
    }
    Sink<Message, ?> record =
        Flow.of(Message.class)
            .take(1)
            .mapAsync(1, m -> m.asTextMessage().getStreamedText().runFold("", String::concat, mat))
            .to(Sink.foreach(first::complete));
    // The server never answers, so the runner waits for its first ack and the test decides when
    // the connection ends.
    return upgrade.get().handleMessagesWith(Flow.fromSinkAndSource(record, Source.maybe()));
  }
}
