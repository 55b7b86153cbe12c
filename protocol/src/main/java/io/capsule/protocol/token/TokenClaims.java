package io.capsule.protocol.token;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What a verified bearer token says.
 *
 * @param projectId the project the token is scoped to
 * @param runnerId the runner it names, when the token names one (always a {@link
 *     ProjectTokens#isRunnerId runner id})
 * @param scope what it lets its bearer do ({@link TokenScope#RUNNER} when the token has no {@code
 *     scope} claim)
 */
public record TokenClaims(
    String projectId,
    Optional<String> runnerId,
    Instant issuedAt,
    Instant expiresAt,
    TokenScope scope) {
  public TokenClaims {
    Objects.requireNonNull(projectId, "projectId");
    runnerId = runnerId == null ? Optional.empty() : runnerId;
    Objects.requireNonNull(issuedAt, "issuedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
    scope = scope == null ? TokenScope.RUNNER : scope;
  }

  /** Claims of a runner token (the only kind before scopes). */
  public TokenClaims(
      String projectId, Optional<String> runnerId, Instant issuedAt, Instant expiresAt) {
    this(projectId, runnerId, issuedAt, expiresAt, TokenScope.RUNNER);
  }
}
