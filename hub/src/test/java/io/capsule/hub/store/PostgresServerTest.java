package io.capsule.hub.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fixture itself: a real server answers JDBC, and closing leaves no process and no files. */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class PostgresServerTest {

  @Test
  void aThrowawayServerAnswersJdbcAndIsGoneAfterClose() throws Exception {
    Path dir;
    long postmaster;
    int port;
    try (PostgresServer pg = PostgresServer.startOrSkip()) {
      port = pg.port();
      dir = pg.directory();
      assertTrue(pg.jdbcUrl().startsWith("jdbc:postgresql://127.0.0.1:"), pg.jdbcUrl());
      try (Connection c = pg.connect();
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE t (id bigint PRIMARY KEY, body bytea NOT NULL)");
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
          for (int i = 0; i < 100; i++) {
            insert.setLong(1, i);
            insert.setBytes(2, new byte[600]);
            insert.addBatch();
          }
          insert.executeBatch();
        }
        try (ResultSet r = s.executeQuery("SELECT count(*), current_user, version() FROM t")) {
          r.next();
          assertEquals(100, r.getLong(1));
          assertEquals("capsule", r.getString(2));
          assertTrue(r.getString(3).startsWith("PostgreSQL 15"), r.getString(3));
        }
      }
      postmaster =
          Long.parseLong(Files.readAllLines(dir.resolve("data/postmaster.pid")).get(0).trim());
      assertTrue(ProcessHandle.of(postmaster).isPresent(), "the postmaster runs");
    }
    assertFalse(Files.exists(dir), "the data directory was deleted");
    assertFalse(
        ProcessHandle.of(postmaster).map(ProcessHandle::isAlive).orElse(false),
        "the postmaster was stopped");
    assertThrows(java.io.IOException.class, () -> new Socket("127.0.0.1", port).close());
  }

  @Test
  void withoutTheBinariesATestIsSkippedWithHowToInstallThem() {
    org.opentest4j.TestAbortedException skipped =
        assertThrows(
            org.opentest4j.TestAbortedException.class,
            () -> PostgresServer.assumeInstalled(Path.of("/nonexistent/postgresql/15/bin")));
    assertTrue(
        skipped.getMessage().contains("apt-get install -y postgresql"), skipped.getMessage());
  }

  @Test
  void aWrongPasswordIsRefused() {
    try (PostgresServer pg = PostgresServer.startOrSkip()) {
      assertThrows(
          java.sql.SQLException.class,
          () -> java.sql.DriverManager.getConnection(pg.jdbcUrl(), pg.user(), "wrong").close());
    }
  }
}
