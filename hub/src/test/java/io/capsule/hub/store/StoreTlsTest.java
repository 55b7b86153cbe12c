package io.capsule.hub.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.hub.HubException.StoreUnavailable;
import io.capsule.hub.http.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The hub's store over TLS, as docs/operations.md documents it: a throwaway PostgreSQL serving a
 * certificate of a CA this test makes; a {@code --store} URL with {@code
 * sslmode=verify-full&sslrootcert=CA} migrates the schema over an encrypted connection (the server
 * says so in {@code pg_stat_ssl}), and the same URL with another CA is refused ({@code E-HUB-001})
 * without the password in the message. Skipped without PostgreSQL's binaries unless {@code
 * CAPSULE_REQUIRE_POSTGRES} is set.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StoreTlsTest {
  private Path certs;
  private Path caFile;
  private Path otherCaFile;
  private PostgresServer pg;

  @BeforeAll
  void startPostgresWithTls() throws Exception {
    if (!PostgresServer.available() && System.getenv("CAPSULE_REQUIRE_POSTGRES") != null) {
      throw new AssertionError("CAPSULE_REQUIRE_POSTGRES is set but PostgreSQL is missing");
    }
    // PostgreSQL reads these as its own user: a directory it may enter, a key only it may read.
    certs = Files.createTempDirectory("capsule-pg-tls-");
    Files.setPosixFilePermissions(certs, PosixFilePermissions.fromString("rwxr-xr-x"));
    TestPki ca = TestPki.ca("capsule-test-db-ca", "EC");
    caFile = ca.writeCa(certs.resolve("ca.pem"));
    otherCaFile = TestPki.ca("capsule-test-db-ca", "EC").writeCa(certs.resolve("other-ca.pem"));
    TestPki.Issued server = ca.issue("db", List.of("127.0.0.1", "localhost"));
    Path cert = server.writeCert(certs.resolve("server.pem"));
    Path key = server.writeKey(certs.resolve("server.key"));
    Files.setPosixFilePermissions(cert, PosixFilePermissions.fromString("rw-r--r--"));
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    if ("root".equals(System.getProperty("user.name"))) {
      UserPrincipalLookupService users = key.getFileSystem().getUserPrincipalLookupService();
      Files.getFileAttributeView(key, PosixFileAttributeView.class)
          .setOwner(users.lookupPrincipalByName("postgres"));
    }
    pg = PostgresServer.startOrSkip("ssl=on", "ssl_cert_file=" + cert, "ssl_key_file=" + key);
  }

  @AfterAll
  void stop() throws IOException {
    if (pg != null) {
      pg.close();
    }
    if (certs != null) {
      try (var files = Files.list(certs)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(certs);
    }
  }

  @Test
  void aVerifyFullUrlWithTheCaMigratesOverTls() throws Exception {
    String url = pg.jdbcUrl() + "?sslmode=verify-full&sslrootcert=" + caFile;
    HubStore store = HubStore.postgres(url, pg.user(), pg.password());
    store.migrate();
    try (Connection c = DriverManager.getConnection(url, pg.user(), pg.password());
        ResultSet r =
            c.createStatement()
                .executeQuery(
                    "SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
      assertTrue(r.next());
      assertTrue(r.getBoolean(1), "the connection is encrypted");
      assertTrue(r.getString(2).startsWith("TLSv1."), r.getString(2));
    }
  }

  @Test
  void aServerCertificateFromAnotherCaIsRefused() {
    String url = pg.jdbcUrl() + "?sslmode=verify-full&sslrootcert=" + otherCaFile;
    HubStore store = HubStore.postgres(url, pg.user(), pg.password());
    StoreUnavailable e = assertThrows(StoreUnavailable.class, store::migrate);
    assertEquals(Code.E_HUB_001, e.code());
    assertFalse(e.getMessage().contains(pg.password()), e.getMessage());
  }
}
