package io.capsule.hub.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.hub.HubException.StoreUnavailable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The store's settings and its own idempotent migration, on a real H2 file. */
class HubStoreTest {
  @TempDir Path dir;

  @Test
  void theMigrationCreatesTheTablesAndRunningItAgainChangesNothing() throws Exception {
    HubStore store = HubStore.h2File(dir);
    store.migrate();
    store.migrate(); // a second start, or `capsule hub migrate` after one
    assertTrue(Files.exists(dir.resolve("hub.mv.db")));
    try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'PUBLIC'"
                        + " AND TABLE_NAME IN ('event_journal', 'event_tag', 'snapshot')")) {
      rs.next();
      assertEquals(3, rs.getInt(1));
    }
  }

  /**
   * The journal's rows are kept in H2's map by {@code ordering} (its primary key), with one unique
   * index beside: two tree inserts a row. Pekko's H2 schema made four (issue #12).
   */
  @Test
  void aNewH2JournalHasOrderingAsItsKeyAndOneUniqueIndexBeside() throws Exception {
    HubStore store = HubStore.h2File(dir);
    store.migrate();
    assertEquals(
        List.of("PRIMARY KEY (ordering)", "UNIQUE INDEX (persistence_id, sequence_number)"),
        journalIndexes(store));
    assertEquals(8192, orderingCache(store), "one sequence write per 8192 rows, not per 32");
  }

  @Test
  void theStoreRefusesASecondEventWithASequenceNumberItsTaskAlreadyHas() throws Exception {
    HubStore store = HubStore.h2File(dir);
    store.migrate();
    assertDuplicateRefused(store);
  }

  /**
   * The identity's values kept in memory (CACHE 8192) are never handed out twice: across a clean
   * stop, a stop that writes nothing more ({@code SHUTDOWN IMMEDIATELY}, as near a kill as H2 goes
   * in one process) and the migration's ALTER at every start, each row's {@code ordering} is above
   * the last one's, and every committed row is there.
   */
  @Test
  void orderingKeepsRisingAcrossStopsAbruptStopsAndMigrations() throws Exception {
    HubStore store = HubStore.h2File(dir);
    int seq = 0;
    for (boolean abrupt : new boolean[] {false, true, true, false}) {
      store.migrate();
      try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
          PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO \"event_journal\" (\"persistence_id\", \"sequence_number\","
                      + " \"writer\", \"write_timestamp\", \"adapter_manifest\","
                      + " \"event_payload\", \"event_ser_id\", \"event_ser_manifest\") VALUES"
                      + " ('Task|t', ?, 'w', 1, '', X'00', 1, 'm')")) {
        for (int i = 0; i < 10; i++) {
          ps.setInt(1, ++seq);
          ps.executeUpdate();
        }
        if (abrupt) {
          c.createStatement().execute("SHUTDOWN IMMEDIATELY");
        }
      }
    }
    try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT \"sequence_number\", \"ordering\" FROM \"event_journal\" ORDER BY"
                        + " \"sequence_number\"")) {
      long last = 0;
      int rows = 0;
      while (rs.next()) {
        rows++;
        assertEquals(rows, rs.getLong(1), "every committed row is kept");
        assertTrue(rs.getLong(2) > last, "ordering " + rs.getLong(2) + " after " + last);
        last = rs.getLong(2);
      }
      assertEquals(seq, rows);
    }
  }

  /**
   * Inserts an event of {@code Task|t} at sequence number 1 and then another: the second must be
   * refused by the store's unique constraint (SQLSTATE 23505), as the JDBC journal relies on when
   * two writers race for a task, and the first must be kept.
   */
  static void assertDuplicateRefused(HubStore store) throws SQLException {
    String insert =
        "INSERT INTO \"event_journal\" (\"persistence_id\", \"sequence_number\", \"writer\","
            + " \"write_timestamp\", \"adapter_manifest\", \"event_payload\","
            + " \"event_ser_id\", \"event_ser_manifest\") VALUES ('Task|dup', 1, ?, 1, '',"
            + " X'00', 1, 'm')";
    try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
        PreparedStatement ps = c.prepareStatement(insert)) {
      ps.setString(1, "first");
      assertEquals(1, ps.executeUpdate());
      ps.setString(1, "second");
      SQLException e = assertThrows(SQLException.class, ps::executeUpdate);
      assertEquals("23505", e.getSQLState(), e.getMessage());
      try (ResultSet rs =
          c.createStatement()
              .executeQuery(
                  "SELECT \"writer\" FROM \"event_journal\" WHERE \"persistence_id\" ="
                      + " 'Task|dup'")) {
        assertTrue(rs.next());
        assertEquals("first", rs.getString(1));
        assertFalse(rs.next());
      }
    }
  }

  /** How many values of {@code ordering}'s identity H2 keeps in memory between its writes. */
  static long orderingCache(HubStore store) throws SQLException {
    try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT IDENTITY_CACHE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA ="
                        + " 'PUBLIC' AND TABLE_NAME = 'event_journal' AND COLUMN_NAME ="
                        + " 'ordering'")) {
      assertTrue(rs.next());
      return rs.getLong(1);
    }
  }

  /** The journal table's indexes as "TYPE (columns)", sorted. */
  static List<String> journalIndexes(HubStore store) throws SQLException {
    Map<String, String> types = new TreeMap<>();
    Map<String, List<String>> columns = new TreeMap<>();
    try (Connection c = DriverManager.getConnection(store.url(), store.user(), store.password());
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT i.INDEX_NAME, i.INDEX_TYPE_NAME, k.COLUMN_NAME"
                        + " FROM INFORMATION_SCHEMA.INDEXES i JOIN INFORMATION_SCHEMA.INDEX_COLUMNS k"
                        + " ON k.INDEX_SCHEMA = i.INDEX_SCHEMA AND k.INDEX_NAME = i.INDEX_NAME"
                        + " WHERE i.TABLE_SCHEMA = 'PUBLIC' AND i.TABLE_NAME = 'event_journal'"
                        + " ORDER BY i.INDEX_NAME, k.ORDINAL_POSITION")) {
      while (rs.next()) {
        types.put(rs.getString(1), rs.getString(2));
        columns.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(3));
      }
    }
    List<String> out = new ArrayList<>();
    types.forEach(
        (name, type) -> out.add(type + " (" + String.join(", ", columns.get(name)) + ")"));
    out.sort(null);
    return out;
  }

  @Test
  void everyBundledSchemaSplitsIntoWholeStatements() {
    assertEquals(5, HubStore.statements("schema-h2.sql").size());
    for (String sql : HubStore.statements("schema-h2.sql")) {
      assertTrue(sql.contains(" IF NOT EXISTS ") || sql.contains(" IF EXISTS "), sql);
    }
    assertEquals(4, HubStore.statements("schema-postgres.sql").size());
    for (String sql : HubStore.statements("schema-postgres.sql")) {
      assertTrue(sql.contains("IF NOT EXISTS"), "idempotent: " + sql);
      assertFalse(sql.contains("CONCURRENTLY"), "runs in a transaction: " + sql);
    }
  }

  @Test
  void anUnreachableDatabaseIsRefusedWithItsCodeAndNoPassword() {
    HubStore store = HubStore.postgres("jdbc:postgresql://127.0.0.1:1/none", "hub", "s3cret-pw");
    StoreUnavailable e = assertThrows(StoreUnavailable.class, store::migrate);
    assertEquals(Code.E_HUB_001, e.code());
    assertFalse(e.getMessage().contains("s3cret-pw"), e.getMessage());
    assertFalse(store.toString().contains("s3cret-pw"));
  }

  @Test
  void theH2FileUrlNeverDelaysWrites() {
    assertTrue(HubStore.h2File(dir).url().contains(";WRITE_DELAY=0;"));
    assertFalse(HubStore.memory().durable());
    assertTrue(HubStore.h2File(dir).durable());
    assertTrue(HubStore.memory().describe().contains("in memory"));
  }
}
