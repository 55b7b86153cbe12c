package io.capsule.hub.store;

import static io.capsule.hub.store.PersistentHubJournalTest.assertSameEntries;
import static io.capsule.hub.store.PersistentHubJournalTest.life;
import static io.capsule.hub.store.PersistentHubJournalTest.withJournal;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubJournal.Entry;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An H2 file made by the schema the hub had before issue #12 (Pekko's: a composite primary key and
 * two unique indexes on {@code ordering}) still opens, writes and restores after today's migration,
 * which takes its redundant second index on {@code ordering} and gives its identity the larger
 * cache, and nothing else.
 */
class FormerH2SchemaTest {
  @TempDir Path dir;

  @Test
  void aStoreOfTheFormerSchemaLosesItsSecondOrderingIndexAndKeepsWritingAndRestoring()
      throws Exception {
    HubStore store = HubStore.h2File(dir);
    try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
        Statement st = c.createStatement()) {
      for (String sql : HubStore.statements("schema-h2-before-12.sql")) {
        st.execute(sql); // what a hub of then ran at its start
      }
    }
    assertEquals(
        List.of(
            "PRIMARY KEY (persistence_id, sequence_number)",
            "UNIQUE INDEX (ordering)",
            "UNIQUE INDEX (ordering)"),
        HubStoreTest.journalIndexes(store),
        "the former schema, as a hub of then left it");
    assertEquals(32, HubStoreTest.orderingCache(store), "H2's default");
    RunnerKey runner = new RunnerKey("p", "r-1");
    List<Entry> before = life(runner, "T-1", 5, true);
    withJournal(store, j -> writeAll(j, before)); // the former hub's history

    store.migrate();
    store.migrate(); // idempotent on such a file too
    assertEquals(
        List.of("PRIMARY KEY (persistence_id, sequence_number)", "UNIQUE INDEX (ordering)"),
        HubStoreTest.journalIndexes(store));
    assertEquals(8192, HubStoreTest.orderingCache(store));

    List<Entry> after = life(runner, "T-2", 5, true);
    withJournal(store, j -> writeAll(j, after));
    List<Entry> all = new ArrayList<>(before);
    all.addAll(after);
    assertSameEntries(all, withJournal(store, PersistentHubJournal::recorded));
    assertEquals(
        List.of("T-1:6", "T-2:6"),
        withJournal(
            store,
            j ->
                j.restorable().stream()
                    .filter(e -> e.frame().type().equals("task.report"))
                    .map(e -> e.frame().taskId() + ":" + e.frame().seq())
                    .toList()),
        "a restart restores both tasks' reports");
    HubStoreTest.assertDuplicateRefused(store);
  }

  private static Void writeAll(PersistentHubJournal j, List<Entry> entries) {
    j.appendAll(entries);
    return null;
  }
}
