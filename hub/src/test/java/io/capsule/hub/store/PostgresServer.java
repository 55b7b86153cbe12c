package io.capsule.hub.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A throwaway PostgreSQL 15 for tests: Debian's binaries ({@code /usr/lib/postgresql/15/bin}), a
 * fresh cluster in a temp directory, listening on a free 127.0.0.1 port (and a Unix socket inside
 * that directory, so it never meets a system server), with one role and one database for the test.
 * {@link #close} stops it ({@code pg_ctl -m fast}, then a kill of the postmaster if that fails) and
 * deletes the directory; a JVM shutdown hook does the same if a test never gets to close it.
 *
 * <p>Root cannot run {@code postgres}; as root the binaries run as the {@code postgres} user
 * through {@code runuser} and the directory is handed to that user (see hub/README.md, "Stores";
 * "Hub persistence and cluster"). As any other user they run as that user.
 *
 * <p>Absent binaries skip the test ({@link #startOrSkip}) with the command that installs them.
 * Every process this starts has a bounded wait; one that overruns is killed and reported.
 */
public final class PostgresServer implements AutoCloseable {
  /** Where Debian's postgresql-15 package puts the server binaries. */
  public static final Path BIN = Path.of("/usr/lib/postgresql/15/bin");

  static final String INSTALL_HINT =
      "PostgreSQL 15 server binaries are not installed ("
          + BIN
          + "/initdb); install them with: apt-get update && apt-get install -y postgresql";

  /** initdb writes a few hundred files; 120 s covers it on a loaded 2-core machine. */
  private static final long INITDB_SECONDS = 120;

  /** pg_ctl's own -w wait for start or stop; the process wait allows a little more. */
  private static final int PG_CTL_SECONDS = 60;

  private static final String ROLE = "capsule";
  private static final String DATABASE = "capsule";

  private final Path dir;
  private final int port;
  private final String password;
  private final boolean asPostgresUser;
  private final Thread hook;
  private boolean closed;

  private PostgresServer(Path dir, int port, String password, boolean asPostgresUser) {
    this.dir = dir;
    this.port = port;
    this.password = password;
    this.asPostgresUser = asPostgresUser;
    this.hook = new Thread(this::stopQuietly, "postgres-server-stop");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Whether the binaries are here (nothing else is checked). */
  public static boolean available() {
    return available(BIN);
  }

  static boolean available(Path bin) {
    return Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("pg_ctl"));
  }

  /** Skips the calling test (a JUnit assumption) unless {@code bin} holds the binaries. */
  static void assumeInstalled(Path bin) {
    Assumptions.assumeTrue(available(bin), INSTALL_HINT);
  }

  /**
   * A started server, or the calling test skipped (a JUnit assumption) when the binaries are
   * absent, saying how to install them.
   *
   * @param settings extra {@code name=value} server settings ({@code postgres -c}), e.g. {@code
   *     max_connections=50}
   */
  public static PostgresServer startOrSkip(String... settings) {
    assumeInstalled(BIN);
    return start(settings);
  }

  /** A started server; fails (does not skip) when the binaries are absent. */
  public static PostgresServer start(String... settings) {
    if (!available()) {
      throw new IllegalStateException(INSTALL_HINT);
    }
    boolean root = "root".equals(System.getProperty("user.name"));
    Path dir;
    try {
      dir = Files.createTempDirectory("capsule-pg-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory for PostgreSQL", e);
    }
    String password = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
    PostgresServer server = null;
    try {
      if (root) {
        giveToPostgres(dir);
      }
      // The superuser's password goes through a file, never the command line (ps shows that).
      Path pwfile = dir.resolve("pwfile");
      Files.writeString(pwfile, password + "\n", StandardCharsets.UTF_8);
      if (root) {
        giveToPostgres(pwfile);
      }
      run(
          root,
          dir,
          INITDB_SECONDS,
          BIN.resolve("initdb").toString(),
          "-D",
          dir.resolve("data").toString(),
          "-U",
          "postgres",
          "--pwfile=" + pwfile,
          "--auth-local=peer",
          "--auth-host=scram-sha-256",
          "-E",
          "UTF8",
          "--locale=C.UTF-8");
      Files.delete(pwfile);
      int port = freePort();
      server = new PostgresServer(dir, port, password, root);
      List<String> options = new ArrayList<>();
      options.add(
          "-p " + port + " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" + dir);
      for (String s : settings) {
        options.add("-c " + s);
      }
      run(
          root,
          dir,
          PG_CTL_SECONDS + 10,
          BIN.resolve("pg_ctl").toString(),
          "-D",
          dir.resolve("data").toString(),
          "-l",
          dir.resolve("server.log").toString(),
          "-o",
          String.join(" ", options),
          "-w",
          "-t",
          Integer.toString(PG_CTL_SECONDS),
          "start");
      server.createRoleAndDatabase();
      return server;
    } catch (IOException | SQLException | RuntimeException e) {
      if (server != null) {
        server.close();
      } else {
        deleteQuietly(dir);
      }
      throw new IllegalStateException(
          "could not start a throwaway PostgreSQL in " + dir + ": " + e.getMessage(), e);
    }
  }

  /** {@code jdbc:postgresql://127.0.0.1:PORT/capsule}. */
  public String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE;
  }

  /** The test role (owner of the database). */
  public String user() {
    return ROLE;
  }

  /** The test role's password (random per server). */
  public String password() {
    return password;
  }

  public int port() {
    return port;
  }

  /** The server's directory (data, log, socket); deleted by {@link #close}. */
  public Path directory() {
    return dir;
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl(), ROLE, password);
  }

  /** Stops the server and deletes its directory. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    stopQuietly();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down; the hook is running or has run
    }
  }

  private synchronized void stopQuietly() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      run(
          asPostgresUser,
          dir,
          PG_CTL_SECONDS + 10,
          BIN.resolve("pg_ctl").toString(),
          "-D",
          dir.resolve("data").toString(),
          "-m",
          "fast",
          "-w",
          "-t",
          Integer.toString(PG_CTL_SECONDS),
          "stop");
    } catch (RuntimeException | IOException e) {
      killPostmaster();
    } finally {
      deleteQuietly(dir);
    }
  }

  /** The postmaster's pid is the first line of postmaster.pid; its children follow it down. */
  private void killPostmaster() {
    try {
      Path pidFile = dir.resolve("data/postmaster.pid");
      if (Files.exists(pidFile)) {
        long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      }
    } catch (IOException | RuntimeException e) {
      // best effort: the directory is deleted next either way
    }
  }

  private void createRoleAndDatabase() throws SQLException {
    String admin = "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    try (Connection c = DriverManager.getConnection(admin, "postgres", password);
        Statement s = c.createStatement()) {
      s.execute("CREATE ROLE " + ROLE + " LOGIN PASSWORD '" + password + "'");
      s.execute("CREATE DATABASE " + DATABASE + " OWNER " + ROLE);
    }
  }

  /**
   * Runs one command (as postgres through runuser when {@code asPostgres}) and waits at most {@code
   * seconds}; its output goes to a log in {@code dir}, quoted in the failure.
   */
  private static void run(boolean asPostgres, Path dir, long seconds, String... command)
      throws IOException {
    List<String> argv = new ArrayList<>();
    if (asPostgres) {
      argv.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    argv.addAll(List.of(command));
    Path log = Files.createTempFile("capsule-pg-cmd-", ".log");
    try {
      Process p =
          new ProcessBuilder(argv)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      boolean done;
      try {
        done = p.waitFor(seconds, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while running " + argv, e);
      }
      if (!done) {
        p.destroyForcibly();
        throw new IllegalStateException(
            argv + " did not finish within " + seconds + " s: " + tail(log));
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            argv + " exited with " + p.exitValue() + ": " + tail(log) + serverLog(dir));
      }
    } finally {
      Files.deleteIfExists(log);
    }
  }

  private static String serverLog(Path dir) throws IOException {
    Path log = dir.resolve("server.log");
    return Files.exists(log) ? "\nserver.log: " + tail(log) : "";
  }

  private static String tail(Path file) throws IOException {
    String text = Files.readString(file, StandardCharsets.UTF_8);
    return text.length() <= 2_000 ? text : "…" + text.substring(text.length() - 2_000);
  }

  private static void giveToPostgres(Path path) throws IOException {
    UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
    UserPrincipal user = users.lookupPrincipalByName("postgres");
    GroupPrincipal group = users.lookupPrincipalByGroupName("postgres");
    PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
    view.setOwner(user);
    view.setGroup(group);
    Files.setPosixFilePermissions(
        path, PosixFilePermissions.fromString(Files.isDirectory(path) ? "rwx------" : "rw-------"));
  }

  /** A port free now; the small race with another process is retried by the caller's rerun. */
  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static void deleteQuietly(Path dir) {
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
              Files.delete(d);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      // a leftover temp directory is not worth failing a test over; it is named capsule-pg-*
    }
  }
}
