package io.capsule.hub.store;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.HubException.StoreUnavailable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Where the hub keeps its state: Pekko Persistence JDBC on H2 in memory (nothing survives the
 * process), H2 in a file under a state directory (one process), or PostgreSQL (a cluster). Gives
 * the Pekko settings that point the journal, the snapshot store and the read journal at it, and
 * creates the schema idempotently ({@link #migrate()}).
 *
 * <p>The password is a value here, never a command-line argument: the caller reads it from a file
 * or the environment.
 */
public record HubStore(Kind kind, String url, String user, String password) {

  /**
   * The one bound on a write of the hub's state: how long the hub waits for its store to confirm
   * (the journal's ask, {@link PersistentHubJournal}) and how long Pekko's JDBC journal lets one
   * call run before its circuit breaker fails it ({@code
   * jdbc-journal.circuit-breaker.call-timeout}, set to this in {@link #pekkoConfig()}; Pekko's
   * default is 10 s). Two bounds disagreed before: a PostgreSQL write at load 30 outlived the
   * breaker's 10 s and failed although the hub would have waited 20 s. The breaker's clock starts
   * when the journal runs the call, after the hub's ask was sent, so with the same value the
   * breaker never fails a write the hub still waits for. 20 s is far above a healthy store's
   * milliseconds and still stops a hub whose store is gone; the brain does not block on a write, so
   * a long bound costs only back-pressure on the runners meanwhile.
   */
  public static final java.time.Duration WRITE_TIMEOUT = java.time.Duration.ofSeconds(20);

  /**
   * Rows the JDBC journal inserts per transaction ({@code jdbc-journal.batchSize}; Pekko's
   * default). The hub sends a whole batch of task entities' persists at once, and the journal
   * groups their rows up to this per transaction.
   */
  static final int JOURNAL_BATCH = 400;

  /**
   * Insert transactions the JDBC journal runs at once ({@code jdbc-journal.parallelism}; Pekko's
   * default is 8). While that many are running, the persists that arrive wait and go together in
   * the next transaction, so fewer in flight make bigger transactions: on H2 with {@code
   * WRITE_DELAY=0} every commit syncs the file, and on PostgreSQL every commit waits for its WAL
   * flush. Measured with {@code PersistBench} (benchmarks/README.md): see there for the figures.
   */
  static final int JOURNAL_PARALLELISM = 2;

  /** Which database, and so which Slick profile, driver and schema file. */
  public enum Kind {
    MEMORY("slick.jdbc.H2Profile$", "org.h2.Driver", "schema-h2.sql"),
    H2_FILE("slick.jdbc.H2Profile$", "org.h2.Driver", "schema-h2.sql"),
    POSTGRES("slick.jdbc.PostgresProfile$", "org.postgresql.Driver", "schema-postgres.sql");

    final String profile;
    final String driver;
    final String schema;

    Kind(String profile, String driver, String schema) {
      this.profile = profile;
      this.driver = driver;
      this.schema = schema;
    }
  }

  public HubStore {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(password, "password");
  }

  /**
   * A private in-memory H2 database: the hub keeps its state while the process lives. The name is
   * unique so two hubs in one JVM (tests) never share one; {@code DB_CLOSE_DELAY=-1} keeps it while
   * no connection is open (Hikari may close all of them when idle).
   */
  public static HubStore memory() {
    return new HubStore(
        Kind.MEMORY,
        "jdbc:h2:mem:capsule-hub-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1" + INPLACE_LOB,
        "sa",
        "");
  }

  /**
   * H2 in {@code dir/hub.mv.db}. {@code WRITE_DELAY=0}: H2's default (500 ms) acknowledges rows it
   * has not written, and a {@code kill -9} lost ~13% of acknowledged events (TOOLCHAIN.md); with it
   * every committed row is in the file before the hub acks the frame. {@link #INPLACE_LOB}: see
   * there.
   */
  public static HubStore h2File(Path dir) {
    Path db = dir.toAbsolutePath().resolve("hub");
    return new HubStore(
        Kind.H2_FILE, "jdbc:h2:file:" + db + ";WRITE_DELAY=0" + INPLACE_LOB, "sa", "");
  }

  /**
   * H2 keeps a {@code BLOB} (the journal's and the snapshots' payloads) of up to this many bytes in
   * its row; its default (256) put every event (a frame's JSON in CBOR, ~0.6 KiB for a progress) in
   * H2's separate LOB maps, three more map writes per row, which a profile of {@code PersistBench}
   * found among H2's biggest costs. Larger payloads (frames up to 1 MiB) still go there. A database
   * setting, stored in the file: an older file takes it on its next open.
   */
  static final String INPLACE_LOB = ";MAX_LENGTH_INPLACE_LOB=8192";

  /** PostgreSQL at {@code url} ({@code jdbc:postgresql://host:port/db}). */
  public static HubStore postgres(String url, String user, String password) {
    if (!url.startsWith("jdbc:postgresql://")) {
      throw new IllegalArgumentException("not a jdbc:postgresql:// URL: " + url);
    }
    return new HubStore(Kind.POSTGRES, url, user, password);
  }

  /** Never the password: this may reach a log. */
  @Override
  public String toString() {
    return "HubStore[" + kind + " " + url + " as " + user + "]";
  }

  /** Whether a restart of the process finds what this store kept. */
  public boolean durable() {
    return kind != Kind.MEMORY;
  }

  /** For the hub's start line: the kind and the URL, never the password. */
  public String describe() {
    return switch (kind) {
      case MEMORY ->
          "in memory (nothing survives a restart; use --state-dir or --store to keep it)";
      case H2_FILE -> "H2 file " + url.substring("jdbc:h2:file:".length()).split(";")[0] + ".mv.db";
      case POSTGRES -> "PostgreSQL " + url + " as " + user;
    };
  }

  /**
   * The Pekko settings that route persistence to this store; put them in front of the application's
   * config. Pool sizes: the hub writes from few entities at a time and the machine this targets has
   * 2 cores; 4 connections let a write, a snapshot and a query overlap.
   */
  public Config pekkoConfig() {
    Map<String, Object> db =
        Map.of(
            "url",
            url,
            "user",
            user,
            "password",
            password,
            "driver",
            kind.driver,
            "numThreads",
            4,
            "maxConnections",
            4,
            "minConnections",
            1);
    return ConfigFactory.empty()
        .withValue("pekko.persistence.journal.plugin", v("jdbc-journal"))
        .withValue("pekko.persistence.snapshot-store.plugin", v("jdbc-snapshot-store"))
        .withValue("jdbc-journal.use-shared-db", v("slick"))
        .withValue("jdbc-snapshot-store.use-shared-db", v("slick"))
        .withValue("jdbc-read-journal.use-shared-db", v("slick"))
        .withValue("jdbc-journal.batchSize", ConfigValueFactory.fromAnyRef(JOURNAL_BATCH))
        .withValue("jdbc-journal.parallelism", ConfigValueFactory.fromAnyRef(JOURNAL_PARALLELISM))
        .withValue("jdbc-journal.circuit-breaker.call-timeout", v(WRITE_TIMEOUT.toMillis() + "ms"))
        .withValue(
            "jdbc-snapshot-store.circuit-breaker.call-timeout", v(WRITE_TIMEOUT.toMillis() + "ms"))
        .withValue("pekko-persistence-jdbc.shared-databases.slick.profile", v(kind.profile))
        .withValue(
            "pekko-persistence-jdbc.shared-databases.slick.db", ConfigValueFactory.fromMap(db));
  }

  /**
   * Creates the journal, tag and snapshot tables and their index where missing, in one transaction;
   * running it again changes nothing. Blocking JDBC: call it before the hub starts, never from an
   * actor.
   *
   * @throws StoreUnavailable {@code E-HUB-001} when the database cannot be reached or refuses
   */
  public void migrate() {
    List<String> statements = statements(kind.schema);
    try (Connection c = DriverManager.getConnection(url, user, password)) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        for (String sql : statements) {
          st.execute(sql);
        }
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new StoreUnavailable(
          Diagnostic.of(
              Code.E_HUB_001, "the hub's store " + describe() + " refused: " + e.getMessage()),
          e);
    }
  }

  /** The schema file's statements: comments dropped, split on the ';' that ends a line. */
  static List<String> statements(String resource) {
    String text;
    try (InputStream in = HubStore.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("schema resource missing from the jar: " + resource);
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the schema resource " + resource, e);
    }
    StringBuilder current = new StringBuilder();
    List<String> out = new ArrayList<>();
    for (String line : text.split("\n")) {
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("--")) {
        continue;
      }
      current.append(line).append('\n');
      if (t.endsWith(";")) {
        String sql = current.toString().strip();
        out.add(sql.substring(0, sql.length() - 1));
        current.setLength(0);
      }
    }
    return List.copyOf(out);
  }

  private static com.typesafe.config.ConfigValue v(String s) {
    return ConfigValueFactory.fromAnyRef(s);
  }
}
