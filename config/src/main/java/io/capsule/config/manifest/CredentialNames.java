package io.capsule.config.manifest;

import java.util.List;
import java.util.Locale;

/**
 * Which environment names look like credentials. A capsule granting one in {@code env.allow} is
 * refused ({@code E-CAP-016}) unless it also lists it under {@code allow_credentials} (then {@code
 * W-SEC-024}), so a secret never reaches a harness by accident.
 *
 * <p>The rule, case-insensitive, on the whole name. First one trailing {@code _FILE} or {@code
 * _PATH} is set aside: a name that points at a key file grants what the key grants ({@code
 * SSH_KEY_FILE}, {@code CLIENT_SECRET_PATH}). Then the name is credential-shaped when it
 *
 * <ul>
 *   <li>ends with {@code _KEY} or {@code APIKEY}: covers the spec's {@code _API_KEY} and the common
 *       spellings of the same thing ({@code OPENAI_KEY}, {@code AWS_SECRET_ACCESS_KEY}, {@code
 *       STRIPE_APIKEY}); a variable named "key" almost always holds one;
 *   <li>ends with {@code _TOKEN} or {@code _SECRET} (the spec's list);
 *   <li>ends with {@code _PASSWD}, {@code _PASS} or {@code _PWD}, or contains {@code PASSWORD} (the
 *       spec says "contains", since {@code DB_PASSWORD_FILE} points at one too); {@code MYSQL_PWD}
 *       is MySQL's password variable, while a bare {@code PWD} is the working directory;
 *   <li>starts with {@code PGPASS}: PostgreSQL's {@code PGPASSWORD} and {@code PGPASSFILE};
 *   <li>ends with {@code _CREDENTIALS}: {@code GOOGLE_APPLICATION_CREDENTIALS} and friends name a
 *       key file, which grants the same as the key;
 *   <li>ends with {@code DATABASE_URL} or {@code _DSN}: connection strings carry the password or
 *       the key ({@code postgres://user:pw@…}, a Sentry DSN);
 *   <li>is exactly one of {@link #EXACT}: bare spellings with no prefix, and names whose value is a
 *       door to credentials rather than one ({@code KUBECONFIG} holds cluster tokens, {@code
 *       SSH_AUTH_SOCK} lets the holder sign as the user, {@code NETRC} and {@code
 *       DOCKER_AUTH_CONFIG} hold logins).
 * </ul>
 *
 * <p>It is deliberately a shape rule, not a list of vendors: it must catch names it has never seen.
 * {@code HOME}, {@code PATH}, {@code PWD}, {@code LANG}, {@code TERM}, {@code KEYBOARD_LAYOUT},
 * {@code BYPASS_PROXY} stay plain.
 */
public final class CredentialNames {

  private static final List<String> POINTERS = List.of("_FILE", "_PATH");
  private static final List<String> SUFFIXES =
      List.of(
          "_KEY",
          "APIKEY",
          "_TOKEN",
          "_SECRET",
          "_PASSWD",
          "_PASS",
          "_PWD",
          "_CREDENTIALS",
          "DATABASE_URL",
          "_DSN");
  private static final List<String> EXACT =
      List.of(
          "API_KEY",
          "TOKEN",
          "SECRET",
          "PASSWD",
          "KUBECONFIG",
          "SSH_AUTH_SOCK",
          "NETRC",
          "DOCKER_AUTH_CONFIG");

  private CredentialNames() {}

  /** Whether {@code envName} is credential-shaped by the rule above. */
  public static boolean isCredentialShaped(String envName) {
    String whole = envName.toUpperCase(Locale.ROOT);
    if (shaped(whole)) {
      return true;
    }
    for (String pointer : POINTERS) {
      if (whole.endsWith(pointer)
          && shaped(whole.substring(0, whole.length() - pointer.length()))) {
        return true;
      }
    }
    return false;
  }

  private static boolean shaped(String name) {
    return name.contains("PASSWORD")
        || name.startsWith("PGPASS")
        || EXACT.contains(name)
        || SUFFIXES.stream().anyMatch(name::endsWith);
  }
}
