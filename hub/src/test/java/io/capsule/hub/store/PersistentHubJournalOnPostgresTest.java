package io.capsule.hub.store;

import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * {@link PersistentHubJournalTest}'s cases on a throwaway PostgreSQL 15 (skipped, with the install
 * command, where its binaries are absent). Each case starts on emptied tables; the migration runs
 * before every case, so it is also proven idempotent on PostgreSQL.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PersistentHubJournalOnPostgresTest extends PersistentHubJournalTest {
  private static PostgresServer pg;

  @BeforeAll
  static void startServer() {
    pg = PostgresServer.startOrSkip();
  }

  @AfterAll
  static void stopServer() {
    if (pg != null) {
      pg.close();
    }
  }

  @Override
  HubStore freshStore() {
    HubStore store = HubStore.postgres(pg.jdbcUrl(), pg.user(), pg.password());
    store.migrate();
    try (Connection c = pg.connect();
        Statement s = c.createStatement()) {
      s.execute("TRUNCATE event_journal, event_tag, snapshot");
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    return store;
  }
}
