package io.capsule.bench.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each hub bench runs once, small, against a real embedded hub: what it measures still works end to
 * end (tasks are placed on the bench runners; every SSE reader gets every event and its stream ends
 * with the report), so a change to the hub that breaks a bench fails here, not at the next
 * measurement.
 */
class HubBenchSmokeTest {

  @Test
  void placementPlacesEveryTaskOnAnAnnouncedRunnerAndHealthzAnswers() throws Exception {
    PlacementBench bench = new PlacementBench();
    bench.store = "memory";
    bench.runners = 3;
    bench.start();
    try {
      for (int i = 0; i < 20; i++) {
        String runner = bench.placeTask();
        assertTrue(List.of("r-000", "r-001", "r-002").contains(runner), runner);
      }
      assertTrue(bench.healthz().startsWith("ok"));
    } finally {
      bench.stop();
    }
  }

  @Test
  void sseLatencyPairsEveryFrameWithItsAckAndEveryReadersEvent() throws Exception {
    SseLatencyBench.Options o =
        SseLatencyBench.Options.parse(
            new String[] {"--events", "60", "--rate", "200", "--warmup", "5", "--store", "h2"});
    SseLatencyBench.Result r = SseLatencyBench.run(o, 3);
    assertEquals(60, r.ack().count());
    assertEquals(180, r.sse().count(), "60 events × 3 readers");
    assertEquals(60, r.lastReader().count());
    assertTrue(r.sse().p50() > 0 && r.ack().p50() > 0, r.row());
    assertTrue(r.lastReader().max() >= r.sse().max(), r.row());
  }

  @Test
  void persistBenchAcksEveryFrameThroughTheJournalAndMeasuresTheBareInsertBeside()
      throws Exception {
    java.util.List<PersistBench.Result> rounds =
        PersistBench.run("h2", new BareJournal(BareJournal.JOURNAL_IDENTITY_CACHE, 1), 2, 40, 2);
    assertEquals(2, rounds.size());
    for (PersistBench.Result r : rounds) {
      assertEquals(80, r.rows());
      // Every frame went through the journal once, besides the round's two assigns.
      assertEquals(82, r.entries(), r.row());
      assertTrue(r.writes() >= 1 && r.writes() <= r.entries(), r.row());
      assertTrue(r.hubPerSecond() > 0 && r.barePerSecond() > 0 && r.ratio() > 0, r.row());
    }
    assertThrows(
        IllegalArgumentException.class,
        () -> PersistBench.Options.parse(new String[] {"--frames", "2"}));
    assertThrows(
        IllegalArgumentException.class,
        () -> PersistBench.Options.parse(new String[] {"--rounds", "0"}));
  }

  @Test
  void badOptionsAreRefusedSayingWhich() {
    var unknown =
        assertThrows(
            IllegalArgumentException.class,
            () -> SseLatencyBench.Options.parse(new String[] {"--speed", "9"}));
    assertTrue(unknown.getMessage().contains("--speed"));
    assertThrows(
        IllegalArgumentException.class,
        () -> SseLatencyBench.Options.parse(new String[] {"--readers", "0"}));
    assertThrows(
        IllegalArgumentException.class,
        () -> SseLatencyBench.Options.parse(new String[] {"--rate"}));
  }
}
