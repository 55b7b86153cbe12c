package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import org.apache.pekko.Done;
import org.junit.jupiter.api.Test;

/** The socket's next frame waits while the connection or the hub has too much unsettled. */
class InflowTest {
  private static final CompletableFuture<Done> NOW = CompletableFuture.completedFuture(null);

  @Test
  void underTheBoundsTheNextFrameIsRequestedAtOnce() {
    Inflow in = new Inflow(10, 100);
    in.add(1, 9);
    CompletableFuture<Done> done = new CompletableFuture<>();
    in.admit(1, done, NOW);
    assertTrue(done.isDone());
  }

  @Test
  void aConnectionAtItsBoundWaitsUntilItsFramesSettle() {
    Inflow in = new Inflow(10, 100);
    in.add(1, 10);
    CompletableFuture<Done> done = new CompletableFuture<>();
    in.admit(1, done, NOW);
    assertFalse(done.isDone());
    assertTrue(in.parked(1));
    in.add(2, 5);
    in.settle(2, 5);
    assertFalse(done.isDone(), "another connection's frames do not release this one");
    in.settle(1, 1);
    assertTrue(done.isDone());
    assertEquals(9, in.unsettled());
  }

  @Test
  void theHubsTotalHoldsBackEveryConnection() {
    Inflow in = new Inflow(10, 15);
    in.add(1, 8);
    in.add(2, 8);
    CompletableFuture<Done> one = new CompletableFuture<>();
    CompletableFuture<Done> two = new CompletableFuture<>();
    in.admit(1, one, NOW);
    in.admit(2, two, NOW);
    assertFalse(one.isDone() || two.isDone());
    in.settle(2, 2);
    assertTrue(one.isDone() && two.isDone(), "14 of 15: both go on");
  }

  @Test
  void aReleasedFrameStillWaitsForItsOwnEvents() {
    Inflow in = new Inflow(10, 100);
    CompletableFuture<Done> events = new CompletableFuture<>();
    CompletableFuture<Done> done = new CompletableFuture<>();
    in.admit(1, done, events);
    assertFalse(done.isDone());
    events.complete(Done.getInstance());
    assertTrue(done.isDone());
  }

  @Test
  void aClosedConnectionIsReleased() {
    Inflow in = new Inflow(10, 100);
    in.add(1, 10);
    CompletableFuture<Done> done = new CompletableFuture<>();
    in.admit(1, done, NOW);
    in.closed(1);
    assertTrue(done.isDone());
    assertFalse(in.parked(1));
  }
}
