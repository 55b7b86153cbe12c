package io.capsule.hub.runner;

import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PostgresServer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

/**
 * {@link HubRestartTest} with the hub's journal in a throwaway PostgreSQL 15, one server per case
 * (skipped, with the install command, where its binaries are absent): a runner resumes against a
 * restarted hub with nothing lost or applied twice, on the store a cluster shares.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class HubRestartOnPostgresTest extends HubRestartTest {
  private PostgresServer pg;

  @BeforeEach
  void startServer() {
    pg = PostgresServer.startOrSkip();
    open.add(0, pg); // first in, so closed after the hub and store nodes that use it
  }

  @Override
  HubStore store(Path state) {
    return HubStore.postgres(pg.jdbcUrl(), pg.user(), pg.password());
  }
}
