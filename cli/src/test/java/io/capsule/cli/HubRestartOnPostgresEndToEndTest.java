package io.capsule.cli;

import io.capsule.hub.store.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/**
 * {@link HubRestartEndToEndTest} with {@code capsule hub --store jdbc:postgresql://…} on a
 * throwaway PostgreSQL 15 (hub-edge's {@code PostgresServer}; skipped with the install command
 * where it is absent): the hub process is killed with SIGKILL mid-run and started again on the same
 * database, and nothing is lost or repeated. The password goes by file, as a person would.
 */
class HubRestartOnPostgresEndToEndTest extends HubRestartEndToEndTest {
  private PostgresServer pg;
  private Path passwordFile;

  /** Started on first use: the base class starts the hub in its own {@code @BeforeAll}. */
  @Override
  List<String> storeArgs() throws Exception {
    if (pg == null) {
      pg = PostgresServer.startOrSkip();
      passwordFile = Files.createTempFile("capsule-pg", ".pw");
      Files.writeString(passwordFile, pg.password());
    }
    return List.of(
        "--store",
        pg.jdbcUrl(),
        "--store-user",
        pg.user(),
        "--store-password-file",
        passwordFile.toString());
  }

  @AfterAll
  void stopServer() throws Exception {
    if (pg != null) {
      pg.close();
      Files.deleteIfExists(passwordFile);
    }
  }
}
