package io.capsule.protocol.token;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What a verified bearer token says.
 *
 * @param projectId the project the token is scoped to
 * @param runnerId the runner it names, when the token names one
 */
public record TokenClaims(
    String projectId, Optional<String> runnerId, Instant issuedAt, Instant expiresAt) {
  public TokenClaims {
    Objects.requireNonNull(projectId, "projectId");
    runnerId = runnerId == null ? Optional.empty() : runnerId;
    Objects.requireNonNull(issuedAt, "issuedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
  }
}
