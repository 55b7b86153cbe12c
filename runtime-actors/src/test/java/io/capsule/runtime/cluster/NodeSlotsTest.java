package io.capsule.runtime.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The node's run slots: bounded waits on manual time, refusals, and a stopped owner's release. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeSlotsTest {

  private static final Duration WAIT = Duration.ofSeconds(5);

  private final ActorTestKit kit = ActorTestKit.create(ManualTime.config());
  private final ManualTime time = ManualTime.get(kit.system());

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  private record Owner(TestProbe<Object> life, TestProbe<NodeSlots.Reply> replies) {
    void acquire(ActorRef<NodeSlots.Command> slots, String task) {
      slots.tell(new NodeSlots.Acquire(task, life.ref(), replies.ref()));
    }
  }

  private Owner owner() {
    return new Owner(kit.createTestProbe(), kit.createTestProbe());
  }

  @Test
  void aStartBeyondTheLimitWaitsUntilItsWaitRunsOutAndOneBeyondTheQueueIsRefusedAtOnce() {
    ActorRef<NodeSlots.Command> slots = kit.spawn(NodeSlots.create(1, 1, WAIT));
    Owner a = owner();
    Owner b = owner();
    Owner c = owner();
    a.acquire(slots, "a");
    assertEquals(new NodeSlots.Granted("a"), a.replies().receiveMessage());
    b.acquire(slots, "b");
    c.acquire(slots, "c");
    NodeSlots.Refused full = c.replies().expectMessageClass(NodeSlots.Refused.class);
    assertTrue(full.message().contains("already wait"), full.message());
    b.replies().expectNoMessage(Duration.ofMillis(100));

    time.timePasses(WAIT.minusMillis(1));
    b.replies().expectNoMessage(Duration.ofMillis(100));
    time.timePasses(Duration.ofMillis(2));
    NodeSlots.Refused late = b.replies().expectMessageClass(NodeSlots.Refused.class);
    assertTrue(late.message().contains("freed within"), late.message());

    slots.tell(new NodeSlots.Release(a.life().ref()));
    TestProbe<NodeSlots.Stats> stats = kit.createTestProbe();
    slots.tell(new NodeSlots.GetStats(stats.ref()));
    assertEquals(new NodeSlots.Stats(1, 0, 0, 1, 1), stats.receiveMessage());
  }

  @Test
  void aSlotOfAnOwnerThatStopsWithoutReleasingGoesToTheNextWaiter() {
    ActorRef<NodeSlots.Command> slots = kit.spawn(NodeSlots.create(1, 4, WAIT));
    Owner a = owner();
    Owner b = owner();
    a.acquire(slots, "a");
    a.replies().expectMessage(new NodeSlots.Granted("a"));
    b.acquire(slots, "b");
    b.replies().expectNoMessage(Duration.ofMillis(100));
    a.life().stop(); // the entity failed: no Release comes
    b.replies().expectMessage(new NodeSlots.Granted("b"));
    // The wait timer of b was cancelled with the grant: no late refusal.
    time.timePasses(WAIT.plusSeconds(1));
    b.replies().expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void aRepeatedAcquireByTheHolderIsGrantedAgainWithoutASecondSlot() {
    ActorRef<NodeSlots.Command> slots = kit.spawn(NodeSlots.create(2, 0, WAIT));
    Owner a = owner();
    a.acquire(slots, "a");
    a.acquire(slots, "a");
    a.replies().expectMessage(new NodeSlots.Granted("a"));
    a.replies().expectMessage(new NodeSlots.Granted("a"));
    TestProbe<NodeSlots.Stats> stats = kit.createTestProbe();
    slots.tell(new NodeSlots.GetStats(stats.ref()));
    assertEquals(1, stats.receiveMessage().held());
  }
}
