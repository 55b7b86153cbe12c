package io.capsule.runtime.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.CapsuleRuntime;
import io.capsule.runtime.CapsuleSerializable;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunPhase;
import io.capsule.runtime.javadsl.RunStatus;
import io.capsule.runtime.run.CapsuleRun;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.SerializationTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every message a sharded run sends between nodes goes through Jackson CBOR and comes back equal.
 * The classes are found by walking the sealed protocols reflectively, so a new public variant that
 * is not {@link CapsuleSerializable}, or has no sample here, fails this test ({@link CapsuleRef} is
 * walked too: a request carries either variant to the runner node).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CrossNodeSerializationTest {

  /** The protocols whose messages may cross nodes, walked through their sealed permits. */
  private static final List<Class<?>> PROTOCOLS =
      List.of(
          RunEvent.class,
          CapsuleRef.class,
          RunEntity.Command.class,
          RunCaller.Command.class,
          CapsuleRuntime.Command.class,
          CapsuleRun.Command.class);

  /** Public messages that stay on their node on purpose, each with the reason. */
  private static final Map<Class<?>, String> NODE_LOCAL =
      Map.of(
          CapsuleRuntime.Register.class, "holds a driver factory, a Java object of this node",
          CapsuleRuntime.PlanSession.class, "a run asks its own node's guardian",
          RunCaller.CancelRequested.class, "the handle's cancel, on the caller's own node");

  private ActorTestKit kit;
  private SerializationTestKit serialization;
  private Map<Class<?>, Object> samples;

  @BeforeAll
  void start() {
    kit = ActorTestKit.create();
    serialization = new SerializationTestKit(kit.system());
    samples = samples();
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  private Map<Class<?>, Object> samples() {
    RunOutcome outcome =
        new RunOutcome(
                "t1",
                RunStatus.FAILED,
                Optional.empty(),
                2,
                new UsageSplit(1, 2, 3, 4, 5),
                Optional.of("E-CLU-001"),
                Optional.of("E-CLU-001"),
                "the node left",
                Optional.of("s-1"),
                Duration.ofMillis(1234))
            .withUnreported(Set.of("thinking"));
    RunRequest request =
        new RunRequest(
                "t1",
                new CapsuleRef.Folder("/caps/hello"),
                "say hi",
                Optional.of("conv"),
                Optional.of("opus"),
                OptionalLong.of(3),
                OptionalLong.empty(),
                Optional.of("/work"),
                Optional.of(List.of("ls")))
            .retryOnNodeLoss(2);
    var caller = kit.<RunCaller.Command>createTestProbe().ref();
    var entity = kit.<RunEntity.Command>createTestProbe().ref();
    var listener = kit.<RunEvent>createTestProbe().ref();
    Map<Class<?>, Object> m = new LinkedHashMap<>();
    for (Object o :
        List.of(
            new RunEvent.StateChanged("t1", RunPhase.RUNNING),
            new RunEvent.SessionStarted("t1", "s-1", "subscription", Optional.of("opus")),
            new RunEvent.TextDelta("t1", "a", "ab"),
            new RunEvent.TextCompleted("t1", "ab"),
            new RunEvent.ThinkingDelta("t1", "h", "hm"),
            new RunEvent.ThinkingCompleted("t1", "hm"),
            new RunEvent.ToolStarted("t1", "c1", "ls"),
            new RunEvent.ToolProgress("t1", "c1", 12),
            new RunEvent.ToolCalled("t1", "c1", "ls", "{}", 1),
            new RunEvent.ToolResulted("t1", "c1", "a b", false),
            new RunEvent.BridgeCall(
                "t1", "call-1", "echo", 1, "timed_out", 12, 0, 60_000, Optional.of("E-TOOL-007")),
            new RunEvent.UsageUpdated("t1", new UsageSplit(0, 0, 7, 1, 0), Set.of("thinking")),
            new RunEvent.QuotaUpdated(
                "t1",
                List.of(
                    new RunEvent.Window(
                        "five-hour",
                        Optional.of(0.5),
                        Optional.of(1L),
                        Optional.of(300L),
                        Optional.of("ok")))),
            new RunEvent.SuggestedPrompt("t1", "next?"),
            new RunEvent.Note("t1", "n"),
            new RunEvent.Retry("t1", 2, "overloaded"),
            new RunEvent.Warning("t1", "W-RUN-002", "untested"),
            new RunEvent.AttemptLost(
                "t1", 1, "pekko://app@127.0.0.1:2552", "E-CLU-001", "the node left"),
            new RunEvent.Finished(outcome),
            new CapsuleRef.Folder("/caps/hello"),
            new CapsuleRef.Registered("echo"),
            new RunEntity.Start(request, 2, caller),
            new RunEntity.Cancel("because"),
            new RunEntity.Sealed(1, caller),
            new RunEntity.Settled(1, caller),
            new RunCaller.Hosted(1, entity, "pekko://app@127.0.0.1:2552"),
            new RunCaller.Event(1, 0, new RunEvent.Finished(outcome)),
            new RunCaller.Events(
                1, 1, List.of(new RunEvent.Note("t1", "n"), new RunEvent.Finished(outcome))),
            new RunCaller.Part(1, 2, 33, "m", new byte[] {1, 2, 3}, true),
            new RunCaller.Lost(1, "pekko://app@127.0.0.1:2552", "left"),
            new RunCaller.CancelSeen(1),
            new CapsuleRuntime.StartRun(
                request, Optional.of(listener), Optional.empty(), Optional.empty()),
            new CapsuleRuntime.CancelRun("t1", "because"),
            new CapsuleRuntime.RunEnded(request, Optional.of("s-1"), false),
            new CapsuleRun.Cancel("stop"))) {
      m.put(o.getClass(), o);
    }
    return m;
  }

  /** Every public class in the sealed protocols, walked recursively. */
  private static List<Class<?>> crossing() {
    List<Class<?>> out = new ArrayList<>();
    for (Class<?> p : PROTOCOLS) {
      walk(p, out);
    }
    return out;
  }

  private static void walk(Class<?> c, List<Class<?>> out) {
    if (c.isSealed()) {
      for (Class<?> sub : c.getPermittedSubclasses()) {
        walk(sub, out);
      }
    } else if (Modifier.isPublic(c.getModifiers()) && !NODE_LOCAL.containsKey(c)) {
      out.add(c);
    }
  }

  Stream<Class<?>> crossingClasses() {
    return crossing().stream();
  }

  @ParameterizedTest
  @MethodSource("crossingClasses")
  void everyPublicVariantIsMarkedAndHasASample(Class<?> type) {
    assertTrue(
        CapsuleSerializable.class.isAssignableFrom(type),
        type.getName()
            + " may cross nodes but is not CapsuleSerializable (or list it as node-local here)");
    assertTrue(samples.containsKey(type), "add a sample of " + type.getName() + " to this test");
  }

  @ParameterizedTest
  @MethodSource("crossingClasses")
  void everyCrossingMessageRoundTripsThroughJacksonCbor(Class<?> type) {
    Object sample = samples.get(type);
    if (sample == null) {
      return; // reported by the test above
    }
    String serializer =
        SerializationExtension.get(Adapter.toClassic(kit.system()))
            .findSerializerFor(sample)
            .getClass()
            .getSimpleName();
    assertEquals("JacksonCborSerializer", serializer, type.getName());
    serialization.verifySerialization(sample, true);
  }

  Stream<Class<?>> runEventVariants() {
    List<Class<?>> out = new ArrayList<>();
    walk(RunEvent.class, out);
    return out.stream();
  }

  @ParameterizedTest
  @MethodSource("runEventVariants")
  void everyRunEventVariantCrossesInsideTheCallersEnvelope(Class<?> type) {
    RunEvent event = (RunEvent) samples.get(type);
    serialization.verifySerialization(new RunCaller.Event(3, 7, event), true);
  }

  @ParameterizedTest
  @MethodSource("runEventVariants")
  void everyRunEventVariantCrossesInsideTheCallersBatchEnvelope(Class<?> type) {
    RunEvent event = (RunEvent) samples.get(type);
    serialization.verifySerialization(new RunCaller.Events(3, 8, List.of(event, event)), true);
  }

  @Test
  void javaSerializationStaysOff() {
    assertFalse(
        kit.system().settings().config().getBoolean("pekko.actor.allow-java-serialization"));
  }

  @Test
  void theWalkFindsTheProtocolsVariants() {
    // Guards the walk itself: a broken walk would make the tests above pass vacuously.
    assertTrue(crossing().contains(RunEvent.AttemptLost.class));
    assertTrue(crossing().contains(RunEntity.Start.class));
    assertEquals(samples.size(), crossing().size(), "one sample per crossing class");
  }
}
