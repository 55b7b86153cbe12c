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
import java.sql.ResultSet;
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

  @Test
  void everyBundledSchemaSplitsIntoWholeStatements() {
    assertEquals(4, HubStore.statements("schema-h2.sql").size());
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
