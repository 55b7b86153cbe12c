package io.capsule.config.manifest;

import java.util.List;
import java.util.Locale;

/**
 * Which environment names look like credentials. A capsule granting one in {@code env.allow} is
 * refused ({@code E-CAP-016}) unless it also lists it under {@code allow_credentials} (then {@code
 * W-SEC-024}), so a secret never reaches a harness by accident.
 *
 * <p>The rule, case-insensitive, on the whole name:
 *
 * <ul>
 *   <li>ends with {@code _KEY}: covers the spec's {@code _API_KEY} and the common spellings of the
 *       same thing ({@code OPENAI_KEY}, {@code AWS_SECRET_ACCESS_KEY}, {@code SSH_PRIVATE_KEY}); a
 *       variable named "key" almost always holds one;
 *   <li>ends with {@code _TOKEN} or {@code _SECRET} (the spec's list);
 *   <li>ends with {@code _PASSWD} or contains {@code PASSWORD} (the spec says "contains", since
 *       {@code DB_PASSWORD_FILE} points at one too);
 *   <li>ends with {@code _CREDENTIALS}: {@code GOOGLE_APPLICATION_CREDENTIALS} and friends name a
 *       key file, which grants the same as the key;
 *   <li>is exactly {@code API_KEY}, {@code TOKEN}, {@code SECRET} or {@code PASSWD} (no prefix).
 * </ul>
 *
 * <p>It is deliberately a shape rule, not a list of vendors: it must catch names it has never seen.
 * {@code HOME}, {@code PATH}, {@code LANG}, {@code TERM}, {@code KEYBOARD_LAYOUT} stay plain.
 */
public final class CredentialNames {

  private static final List<String> SUFFIXES =
      List.of("_KEY", "_TOKEN", "_SECRET", "_PASSWD", "_CREDENTIALS");
  private static final List<String> EXACT = List.of("API_KEY", "TOKEN", "SECRET", "PASSWD");

  private CredentialNames() {}

  /** Whether {@code envName} is credential-shaped by the rule above. */
  public static boolean isCredentialShaped(String envName) {
    String name = envName.toUpperCase(Locale.ROOT);
    return name.contains("PASSWORD")
        || EXACT.contains(name)
        || SUFFIXES.stream().anyMatch(name::endsWith);
  }
}
