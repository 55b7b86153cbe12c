package io.capsule.runtime;

import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import io.capsule.runtime.javadsl.RunStatus;
import io.capsule.runtime.run.CapsuleRun;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.SerializationTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every message that may cross nodes goes through the serializer bound in reference.conf and comes
 * back equal (ARCHITECTURE: runs become sharded entities started from a serializable message).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CrossNodeMessagesTest {

  private ActorTestKit kit;
  private SerializationTestKit serialization;

  @BeforeAll
  void start() {
    kit = ActorTestKit.create();
    serialization = new SerializationTestKit(kit.system());
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  Stream<Object> messages() {
    TestProbe<RunEvent> listener = kit.createTestProbe();
    RunOutcome outcome =
        new RunOutcome(
            "t1",
            RunStatus.FAILED,
            Optional.empty(),
            2,
            new UsageSplit(1, 2, 3, 4, 5),
            Optional.of("E-RUN-033"),
            Optional.of("E-RUN-033:quota"),
            "out of quota",
            Optional.of("s-1"),
            Duration.ofMillis(1234));
    RunRequest request =
        new RunRequest(
            "t1",
            new CapsuleRef.Folder("/caps/hello"),
            "say hi",
            Optional.of("conv"),
            Optional.empty(),
            OptionalLong.of(3),
            OptionalLong.empty(),
            Optional.of("/work"));
    return Stream.of(
        request,
        RunRequest.of("t2", new CapsuleRef.Registered("mem"), "x"),
        RunRequest.of("t3", new CapsuleRef.Registered("mem"), "x")
            .withAllowedTools(List.of("echo", "cat")),
        RunRequest.of("t4", new CapsuleRef.Registered("mem"), "x").withAllowedTools(List.of()),
        new CapsuleRuntime.StartRun(
            request, Optional.of(listener.ref()), Optional.empty(), Optional.empty()),
        new CapsuleRuntime.StartRun(
            request,
            Optional.of(listener.ref()),
            Optional.of(listener.ref().<List<RunEvent>>unsafeUpcast()),
            Optional.empty(),
            Optional.empty()),
        new CapsuleRuntime.CancelRun("t1", "because"),
        new CapsuleRun.Cancel("stop"),
        new RunEvent.StateChanged("t1", RunPhase.RUNNING),
        new RunEvent.TextDelta("t1", "a", "ab"),
        new RunEvent.ToolCalled("t1", "c1", "ls", "{}", 1),
        new RunEvent.UsageUpdated("t1", new UsageSplit(0, 0, 7, 1, 0)),
        new RunEvent.UsageUpdated(
            "t1", new UsageSplit(0, 0, 7, 1, 0), Set.of("cache_write", "thinking")),
        outcome.withUnreported(Set.of("cache_read")),
        new RunEvent.QuotaUpdated(
            "t1",
            List.of(
                new RunEvent.Window(
                    "five-hour",
                    Optional.of(0.5),
                    Optional.of(1L),
                    Optional.empty(),
                    Optional.of("ok")))),
        new RunEvent.Warning("t1", "W-RUN-002", "untested"),
        new RunEvent.BridgeCall(
            "t1", "call-1", "echo", 1, "timed_out", 12, 0, 60_000, Optional.of("E-TOOL-007")),
        new RunEvent.Finished(outcome),
        outcome);
  }

  @ParameterizedTest
  @MethodSource("messages")
  void aCrossNodeMessageSurvivesTheBoundSerializer(Object message) {
    serialization.verifySerialization(message, true);
  }

  @Test
  void aStartWhoseBatchListenerIsNotItsListenerIsRefused() {
    TestProbe<RunEvent> listener = kit.createTestProbe();
    TestProbe<List<RunEvent>> other = kit.createTestProbe();
    RunRequest r = RunRequest.of("t1", new CapsuleRef.Registered("mem"), "x");
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new CapsuleRuntime.StartRun(
                r,
                Optional.of(listener.ref()),
                Optional.of(other.ref()),
                Optional.empty(),
                Optional.empty()));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new CapsuleRuntime.StartRun(
                r, Optional.empty(), Optional.of(other.ref()), Optional.empty(), Optional.empty()));
  }
}
