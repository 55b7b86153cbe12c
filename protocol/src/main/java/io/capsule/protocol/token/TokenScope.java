package io.capsule.protocol.token;

import java.util.Locale;
import java.util.Optional;

/**
 * What a token lets its bearer do, carried in the {@code scope} claim as {@code runner}, {@code
 * api} or {@code admin}. A token without the claim is a {@link #RUNNER} token: every token issued
 * before scopes existed was a runner token, and reading it as anything wider would widen old
 * tokens.
 *
 * <p>The routes check: the runner endpoint admits {@link #RUNNER} only (a runner token cannot
 * submit or cancel tasks, and an API token cannot pose as a runner); reading, submitting and
 * cancelling tasks admit {@link #API} and {@link #ADMIN}; deleting admits {@link #ADMIN} only.
 */
public enum TokenScope {
  RUNNER,
  API,
  ADMIN;

  /** The claim's value on the wire: the name in lower case. */
  public String claim() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The scope a claim value names, exactly as {@link #claim()} writes it; empty for any other. */
  public static Optional<TokenScope> ofClaim(String value) {
    for (TokenScope s : values()) {
      if (s.claim().equals(value)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /** Whether the bearer may open the runner endpoint. */
  public boolean opensRunnerEndpoint() {
    return this == RUNNER;
  }

  /** Whether the bearer may read, submit and cancel tasks. */
  public boolean usesTaskApi() {
    return this == API || this == ADMIN;
  }

  /** Whether the bearer may delete tasks (and do what {@link #usesTaskApi()} allows). */
  public boolean deletes() {
    return this == ADMIN;
  }
}
