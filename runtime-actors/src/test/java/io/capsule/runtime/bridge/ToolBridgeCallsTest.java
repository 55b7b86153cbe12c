package io.capsule.runtime.bridge;

import static io.capsule.runtime.bridge.BridgeTestSupport.text;
import static io.capsule.runtime.bridge.BridgeTestSupport.toolCall;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.runtime.bridge.ToolCallEvent.CallStatus;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tool calls through a real bridge: results, gate refusals, limits, and real process groups. */
class ToolBridgeCallsTest {
  private static final ActorTestKit KIT = ActorTestKit.create();

  @TempDir Path tmp;
  private Path workdir;
  private Map<String, String> env;
  private final BridgeTestSupport.Recorder recorder = new BridgeTestSupport.Recorder();
  private final List<ToolBridge> bridges = new ArrayList<>();

  @BeforeEach
  void installTools() throws Exception {
    Path bin = tmp.resolve("bin");
    BridgeTestSupport.installTools(bin);
    workdir = Files.createDirectories(tmp.resolve("work")).toRealPath();
    env = BridgeTestSupport.grantedEnv(bin);
  }

  @AfterEach
  void stopBridges() throws Exception {
    for (ToolBridge bridge : bridges) {
      bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    recorder.assertEmpty();
  }

  @AfterAll
  static void shutdown() {
    KIT.shutdownTestKit();
  }

  private BridgeTestSupport.Client start(BridgeConfig config, boolean readOnly) throws Exception {
    ToolBridge bridge =
        ToolBridge.start(
                KIT.system(),
                config,
                new ToolWorkspace(workdir, env, readOnly),
                ShellTool.resolveAll(BridgeTestSupport.TOOLS, env),
                recorder)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    bridges.add(bridge);
    return new BridgeTestSupport.Client(bridge);
  }

  private BridgeTestSupport.Client start() throws Exception {
    return start(BridgeConfig.defaults(), false);
  }

  /** Asserts an isError result carrying {@code code}, and its REFUSED event. */
  private void assertRefused(JsonNode result, String code) throws Exception {
    assertTrue(result.get("isError").asBoolean(), result.toString());
    assertTrue(text(result).startsWith(code + " "), text(result));
    ToolCallEvent.Finished refused = recorder.nextFinished();
    assertEquals(CallStatus.REFUSED, refused.status());
    assertEquals(code, refused.diagnostic().orElseThrow().code().id());
  }

  @Test
  void returnsANonZeroExitAsAnErrorResultWithBothStreams() throws Exception {
    JsonNode result = start().call("fail", "{\"args\":[]}");
    assertTrue(result.get("isError").asBoolean());
    String out = text(result);
    assertTrue(out.contains("partial result"), out);
    assertTrue(out.contains("stderr:\nsomething went wrong"), out);
    assertTrue(out.contains("exit code 3"), out);
    recorder.nextStarted();
    ToolCallEvent.Finished finished = recorder.nextFinished();
    assertEquals(CallStatus.TOOL_ERROR, finished.status());
    assertEquals(Optional.of(3), finished.exitCode());
    assertEquals(Optional.empty(), finished.diagnostic());
  }

  @Test
  void reportsAToolThatCannotBeStartedAsAFailedCall() throws Exception {
    BridgeTestSupport.Client client = start();
    // the inventory was fixed at start; the binary disappearing later is a start failure
    Files.delete(tmp.resolve("bin").resolve("probe"));
    JsonNode result = client.call("probe", "{\"args\":[]}");
    assertTrue(result.get("isError").asBoolean());
    assertTrue(text(result).startsWith("E-TOOL-009 "), text(result));
    ToolCallEvent.Finished failed = recorder.nextFinished();
    assertEquals(CallStatus.FAILED, failed.status());
    assertEquals("E-TOOL-009", failed.diagnostic().orElseThrow().code().id());
    assertEquals(0, client.bridge.callsInFlight());
  }

  @Test
  void refusesEveryCallTheGateRejects() throws Exception {
    BridgeTestSupport.Client client =
        start(
            BridgeConfig.defaults()
                .withPolicy(
                    call ->
                        call.args().contains("forbidden")
                            ? ToolPolicy.Decision.deny("not on a Sunday")
                            : ToolPolicy.Decision.allow()),
            false);
    assertRefused(client.call("rm", "{\"args\":[\"-rf\",\"/\"]}"), "E-TOOL-002");
    assertRefused(client.call("probe", "{}"), "E-TOOL-002");
    assertRefused(client.call("probe", "{\"args\":\"not a list\"}"), "E-TOOL-002");
    assertRefused(client.call("probe", "{\"args\":[1]}"), "E-TOOL-002");
    assertRefused(client.call("probe", "{\"args\":[],\"cwd\":\"/\"}"), "E-TOOL-002");
    assertRefused(client.call("probe", "{\"args\":[],\"stdin\":5}"), "E-TOOL-002");
    JsonNode denied = client.call("probe", "{\"args\":[\"forbidden\"]}");
    assertTrue(text(denied).contains("not on a Sunday"), text(denied));
    assertRefused(denied, "E-TOOL-004");

    client.bridge.beginEnding();
    assertRefused(client.call("probe", "{\"args\":[]}"), "E-TOOL-003");
  }

  @Test
  void treatsAThrowingPolicyAsADenial() throws Exception {
    BridgeTestSupport.Client client =
        start(
            BridgeConfig.defaults()
                .withPolicy(
                    call -> {
                      throw new IllegalStateException("policy bug");
                    }),
            false);
    JsonNode result = client.call("probe", "{\"args\":[]}");
    assertTrue(text(result).contains("policy bug"), text(result));
    assertRefused(result, "E-TOOL-004");
  }

  @Test
  void cutsOutputAtTheCapAndSaysSo() throws Exception {
    JsonNode result =
        start(BridgeConfig.defaults().withOutputCapBytes(100), false)
            .call("spew", "{\"args\":[\"100000\"]}");
    assertFalse(result.get("isError").asBoolean(), result.toString());
    assertEquals("x".repeat(100), result.get("content").get(0).get("text").asText());
    assertTrue(text(result).contains("[output cut at 100 bytes"), text(result));
    assertFalse(text(result).contains("done"), "stderr past the cap is dropped too");
    recorder.nextStarted();
    assertEquals(CallStatus.OK, recorder.nextFinished().status());
  }

  @Test
  void runsToolsUnderAReadOnlyWorkdirWhenTheManifestAsksForIt() throws Exception {
    Files.writeString(workdir.resolve("existing.txt"), "kept");
    BridgeTestSupport.Client client = start(BridgeConfig.defaults(), true);

    JsonNode write = client.call("writer", "{\"args\":[\"new.txt\"]}");
    assertTrue(write.get("isError").asBoolean(), write.toString());
    assertTrue(text(write).contains("Read-only file system"), text(write));
    assertFalse(Files.exists(workdir.resolve("new.txt")));
    JsonNode overwrite = client.call("writer", "{\"args\":[\"existing.txt\"]}");
    assertTrue(overwrite.get("isError").asBoolean());
    assertEquals("kept", Files.readString(workdir.resolve("existing.txt")));

    // reading still works, in the same working directory, with the same arguments
    JsonNode read = client.call("probe", "{\"args\":[\"a b\"]}");
    assertFalse(read.get("isError").asBoolean(), read.toString());
    assertTrue(text(read).contains("arg=a b\ncwd=" + workdir + "\n"), text(read));

    for (CallStatus expected :
        List.of(CallStatus.TOOL_ERROR, CallStatus.TOOL_ERROR, CallStatus.OK)) {
      recorder.nextStarted();
      assertEquals(expected, recorder.nextFinished().status());
    }
    // the same tool without the rule can write: the refusal above came from the mount
    JsonNode free = start().call("writer", "{\"args\":[\"new.txt\"]}");
    assertFalse(free.get("isError").asBoolean(), free.toString());
    assertTrue(Files.exists(workdir.resolve("new.txt")));
    recorder.nextStarted();
    recorder.nextFinished();
  }

  @Test
  void killsASlowToolsWholeProcessGroupAtItsTimeout() throws Exception {
    BridgeTestSupport.Client client =
        start(BridgeConfig.defaults().withCallTimeout(Duration.ofSeconds(1)), false);
    Path fifo = BridgeTestSupport.fifo(tmp, "slow.fifo");
    CompletableFuture<HttpResponse<String>> response =
        client.postAsync(toolCall(1, "slow", "{\"args\":[\"" + fifo + "\"]}"));
    long[] pids = BridgeTestSupport.readPids(fifo);
    long pgid = pids[0];
    assertEquals(
        java.util.Set.of(pids[0], pids[1]),
        java.util.Set.copyOf(BridgeTestSupport.liveMembers(pgid)),
        "the tool and its child share the tool's group");

    HttpResponse<String> r = response.get(20, TimeUnit.SECONDS);
    JsonNode result = BridgeTestSupport.JSON.readTree(r.body()).get("result");
    assertTrue(result.get("isError").asBoolean());
    assertTrue(text(result).contains("E-TOOL-007"), text(result));
    assertEquals(
        List.of(), BridgeTestSupport.awaitGroupGone(pgid), "live members of group " + pgid);

    recorder.nextStarted();
    ToolCallEvent.Finished finished = recorder.nextFinished();
    assertEquals(CallStatus.TIMED_OUT, finished.status());
    assertEquals("E-TOOL-007", finished.diagnostic().orElseThrow().code().id());
    assertTrue(
        finished.duration().compareTo(Duration.ofSeconds(1)) >= 0, finished.duration().toString());
  }

  @Test
  void refusesTheSeventeenthConcurrentCallAtOnceAndKillsTheRestOnStop() throws Exception {
    BridgeTestSupport.Client client = start();
    List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      slow.add(client.postAsync(toolCall(i, "slow", "{\"args\":[]}")));
    }
    for (int i = 0; i < 16; i++) {
      recorder.nextStarted();
    }
    assertEquals(16, client.bridge.callsInFlight());

    JsonNode seventeenth = client.call("slow", "{\"args\":[]}");
    assertRefused(seventeenth, "E-TOOL-005");
    assertEquals(16, client.bridge.callsInFlight());

    client.bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertEquals(16, recorder.events.size(), "stop completes after every killed call finished");
    for (int i = 0; i < 16; i++) {
      assertEquals(CallStatus.STOPPED, recorder.nextFinished().status());
    }
    assertEquals(0, client.bridge.callsInFlight());
    for (CompletableFuture<HttpResponse<String>> f : slow) {
      // Each answered with its STOPPED result, or cut when the connections closed, or (seen at
      // load 28) answered 503 by the server's own shutdown when the unbind overtook the answer.
      String answer = f.handle(ToolBridgeCallsTest::stoppedAnswer).get(20, TimeUnit.SECONDS);
      assertTrue(answer.startsWith("ok"), answer);
    }
  }

  /** "ok…" for the answers a call killed by stop may get; otherwise what it got, to be shown. */
  private static String stoppedAnswer(HttpResponse<String> r, Throwable e) {
    if (r == null) {
      return "ok: cut (" + e + ")";
    }
    if (r.statusCode() == 503) {
      return "ok: 503 from the server's shutdown";
    }
    JsonNode result;
    try {
      result = r.statusCode() == 200 ? resultOf(r) : null;
    } catch (IllegalStateException notJson) {
      result = null;
    }
    return result != null && result.has("content") && text(result).contains("E-TOOL-008")
        ? "ok: STOPPED"
        : "unexpected answer " + r.statusCode() + ": " + r.body();
  }

  private static JsonNode resultOf(HttpResponse<String> r) {
    try {
      return BridgeTestSupport.JSON.readTree(r.body()).get("result");
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
