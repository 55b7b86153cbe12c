package io.capsule.hub.web;

import com.typesafe.config.Config;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Readiness of the hub's store: one real write, read back and removed, in one transaction, on the
 * database the journal uses (its URL from the system's {@code pekko-persistence-jdbc} settings). A
 * database that is gone, read-only or full fails the write, so the hub reports unready before a
 * runner's frame would go unacknowledged.
 *
 * <p>The probe writes to its own table {@code capsule_readiness} (created on first use, always
 * empty after a probe), never to the journal's tables: a probe row there would become an event and
 * a gap in the journal's ordering.
 *
 * <p>Threading: {@link #check} may be called from any thread; the JDBC work runs on Pekko's
 * blocking I/O dispatcher. Concurrent checks share one probe, and a result is reused for {@link
 * #FRESH}, so a load balancer probing often costs the database at most one write per second.
 */
final class StoreProbe implements Readiness {
  /** A probe answer younger than this is reused. */
  static final Duration FRESH = Duration.ofSeconds(1);

  /** Seconds a probe statement may take: below {@link Readiness#DEADLINE}. */
  private static final int STATEMENT_SECONDS = 2;

  private static final Logger LOG = LoggerFactory.getLogger(StoreProbe.class);

  private final String url;
  private final String user;
  private final String password;
  private final Executor blocking;
  private final Clock clock;
  private CompletableFuture<Boolean> last;
  private long lastAt;

  StoreProbe(String url, String user, String password, Executor blocking, Clock clock) {
    this.url = url;
    this.user = user;
    this.password = password;
    this.blocking = blocking;
    this.clock = clock;
  }

  /** A probe of the system's JDBC store, or empty when its persistence does not go to one. */
  static Optional<Readiness> of(ActorSystem<?> system) {
    Config c = system.settings().config();
    String db = "pekko-persistence-jdbc.shared-databases.slick.db";
    if (!c.hasPath("pekko.persistence.journal.plugin")
        || !"jdbc-journal".equals(c.getString("pekko.persistence.journal.plugin"))
        || !c.hasPath(db + ".url")) {
      return Optional.empty();
    }
    Executor blocking = system.dispatchers().lookup(DispatcherSelector.blocking());
    return Optional.of(
        new StoreProbe(
            c.getString(db + ".url"),
            c.hasPath(db + ".user") ? c.getString(db + ".user") : "",
            c.hasPath(db + ".password") ? c.getString(db + ".password") : "",
            blocking,
            Clock.systemUTC()));
  }

  @Override
  public synchronized CompletionStage<Boolean> check() {
    long now = clock.millis();
    if (last != null && (!last.isDone() || now - lastAt < FRESH.toMillis())) {
      return last;
    }
    lastAt = now;
    last = CompletableFuture.supplyAsync(this::probe, blocking);
    return last;
  }

  private boolean probe() {
    String key = UUID.randomUUID().toString();
    try (Connection c = DriverManager.getConnection(url, user, password)) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.setQueryTimeout(STATEMENT_SECONDS);
        st.execute(
            "CREATE TABLE IF NOT EXISTS capsule_readiness"
                + " (probe VARCHAR(64) PRIMARY KEY, at_millis BIGINT NOT NULL)");
      }
      long at = clock.millis();
      execute(c, "INSERT INTO capsule_readiness (probe, at_millis) VALUES (?, " + at + ")", key);
      boolean readBack;
      try (PreparedStatement q =
          c.prepareStatement("SELECT at_millis FROM capsule_readiness WHERE probe = ?")) {
        q.setQueryTimeout(STATEMENT_SECONDS);
        q.setString(1, key);
        try (ResultSet rs = q.executeQuery()) {
          readBack = rs.next() && rs.getLong(1) == at;
        }
      }
      execute(c, "DELETE FROM capsule_readiness WHERE probe = ?", key);
      c.commit();
      if (!readBack) {
        LOG.warn("not ready: the store did not return the probe row it just wrote");
      }
      return readBack;
    } catch (SQLException e) {
      // The message names the database and the failure, never the password.
      LOG.warn("not ready: the store refused a write: {}", e.getMessage());
      return false;
    }
  }

  private static void execute(Connection c, String sql, String key) throws SQLException {
    try (PreparedStatement st = c.prepareStatement(sql)) {
      st.setQueryTimeout(STATEMENT_SECONDS);
      st.setString(1, key);
      st.executeUpdate();
    }
  }
}
