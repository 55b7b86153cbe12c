package io.capsule.hub.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.hub.HubCluster;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.hub.store.HubJournal.Entry;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.TaskProgress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal on a real H2 file under a state directory (and, in {@link
 * PersistentHubJournalOnPostgresTest}, on a real PostgreSQL): what one hub (actor system) records,
 * the next one reads back frame for frame; forged or out-of-order entries are refused with their
 * code and not kept.
 */
class PersistentHubJournalTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private static final FrameCodec CODEC = FrameCodec.shared();

  @TempDir Path dir;

  /** The store a test starts on, empty and migrated. */
  HubStore freshStore() {
    HubStore store = HubStore.h2File(dir);
    store.migrate();
    return store;
  }

  @Test
  void entriesRecordedByOneHubAreReadBackByTheNextInTaskOrder() {
    HubStore store = freshStore();
    List<Entry> t1 = JournalHistory.of(new RunnerKey("p", "r-1"), "T-1");
    List<Entry> t2 = JournalHistory.of(new RunnerKey("p", "r-2"), "T-2");
    withJournal(
        store,
        j -> {
          assertEquals(List.of(), j.recorded());
          j.append(t1.get(0));
          j.append(t2.get(0));
          j.appendAll(t1.subList(1, 4)); // together, as the hub batches what arrives together
          j.appendAll(t2.subList(1, 4));
          return null;
        });
    List<Entry> expected = new ArrayList<>(t1);
    expected.addAll(t2);
    List<Entry> read = withJournal(store, PersistentHubJournal::recorded);
    assertSameEntries(expected, read);
  }

  @Test
  void aForgedReportForAnotherRunnersTaskIsRefusedAndNotKept() {
    HubStore store = freshStore();
    List<Entry> t1 = JournalHistory.history();
    withJournal(
        store,
        j -> {
          j.append(t1.get(0));
          Entry forged =
              new Entry(new RunnerKey("p", "intruder"), Direction.APPLIED, t1.get(3).frame());
          ProtocolException e = assertThrows(ProtocolException.class, () -> j.append(forged));
          assertEquals(Code.E_PRO_010, e.code());
          assertTrue(e.getMessage().contains("placed on runner 'r-1'"), e.getMessage());
          return null;
        });
    assertSameEntries(t1.subList(0, 1), withJournal(store, PersistentHubJournal::recorded));
  }

  @Test
  void aFrameThatDoesNotApplyNextIsRefusedWholeWithItsBatch() {
    HubStore store = freshStore();
    List<Entry> t1 = JournalHistory.history();
    TaskProgress skipped = ((TaskProgress) t1.get(1).frame()).withSeq(3);
    withJournal(
        store,
        j -> {
          j.append(t1.get(0));
          assertThrows(
              ProtocolException.class,
              () ->
                  j.appendAll(
                      List.of(
                          t1.get(1), new Entry(t1.get(1).runner(), Direction.APPLIED, skipped))));
          return null;
        });
    assertSameEntries(t1.subList(0, 1), withJournal(store, PersistentHubJournal::recorded));
  }

  /** Opens a journal on a fresh actor system over {@code store}, runs {@code body}, terminates. */
  private static <T> T withJournal(HubStore store, Function<PersistentHubJournal, T> body) {
    ActorTestKit kit =
        ActorTestKit.create(
            "journal",
            store
                .pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    try {
      ActorSystem<?> system = kit.system();
      return body.apply(PersistentHubJournal.open(system, TIMEOUT));
    } finally {
      kit.shutdownTestKit();
    }
  }

  private static void assertSameEntries(List<Entry> expected, List<Entry> actual) {
    assertEquals(expected.size(), actual.size(), "entries: " + actual);
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i).runner(), actual.get(i).runner());
      assertEquals(expected.get(i).direction(), actual.get(i).direction());
      assertEquals(
          CODEC.encodeToString(expected.get(i).frame()),
          CODEC.encodeToString(actual.get(i).frame()));
    }
  }
}
