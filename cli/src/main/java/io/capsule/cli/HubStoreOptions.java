package io.capsule.cli;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.hub.store.HubStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Where {@code capsule hub} and {@code capsule hub migrate} keep the hub's state. The PostgreSQL
 * password comes from a file or the environment, never from the command line (it would show in
 * {@code ps} and shell history).
 */
final class HubStoreOptions {
  /** The environment variable read when no {@code --store-password-file} is given. */
  static final String PASSWORD_ENV = "CAPSULE_HUB_STORE_PASSWORD";

  @Option(
      names = "--state-dir",
      description =
          "keep the hub's state in an H2 database file in this directory (hub.mv.db) so a"
              + " restarted hub resumes its runners with nothing lost or repeated")
  Path stateDir;

  @Option(
      names = "--store",
      paramLabel = "JDBC_URL",
      description =
          "keep the hub's state in PostgreSQL (jdbc:postgresql://HOST:PORT/DB) instead; the"
              + " password from --store-password-file or $"
              + PASSWORD_ENV
              + "; TLS with ?sslmode=verify-full&sslrootcert=CA.pem")
  String store;

  @Option(
      names = "--store-user",
      defaultValue = "capsule",
      description = "the PostgreSQL user (default ${DEFAULT-VALUE})")
  String storeUser;

  @Option(names = "--store-password-file", description = "a file holding the PostgreSQL password")
  Path storePasswordFile;

  /** The store these options name: PostgreSQL, an H2 file, or memory when neither is given. */
  HubStore resolve() {
    if (store != null && stateDir != null) {
      throw refused("--store and --state-dir name two stores", "give one of them");
    }
    if (store != null) {
      if (!store.startsWith("jdbc:postgresql://")) {
        throw refused(
            "--store '" + store + "' is not a jdbc:postgresql:// URL",
            "e.g. --store jdbc:postgresql://127.0.0.1:5432/capsule");
      }
      if (store.toLowerCase(java.util.Locale.ROOT).matches(".*[?&]password=.*")) {
        // A URL's password would show in `ps`, shell history and the hub's start line.
        throw refused(
            "--store names a password in the URL; it would show in ps and in the hub's output",
            "remove password= from the URL and pass --store-password-file FILE or $"
                + PASSWORD_ENV);
      }
      return HubStore.postgres(store, storeUser, password());
    }
    if (stateDir != null) {
      try {
        Files.createDirectories(stateDir);
      } catch (IOException e) {
        throw refused(
            "--state-dir " + stateDir + " cannot be created: " + e, "pick a writable directory");
      }
      return HubStore.h2File(stateDir);
    }
    return HubStore.memory();
  }

  private String password() {
    if (storePasswordFile != null) {
      try {
        return Files.readString(storePasswordFile, StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        throw refused(
            "cannot read --store-password-file " + storePasswordFile + ": " + e,
            "pass a readable file holding only the password");
      }
    }
    String env = System.getenv(PASSWORD_ENV);
    return env == null ? "" : env;
  }

  private static DiagnosticException refused(String what, String hint) {
    return new DiagnosticException(Diagnostic.of(Code.E_CFG_001, what).withHint(hint));
  }
}
