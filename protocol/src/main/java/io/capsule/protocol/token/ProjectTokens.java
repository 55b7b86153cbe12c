package io.capsule.protocol.token;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TokenRefused;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Optional;

/**
 * Issues and verifies the project-scoped, short-lived bearer tokens of runner protocol v1: a JWT
 * signed with HS256 over a shared secret, carrying {@code project_id}, {@code iat}, {@code exp} and
 * optionally {@code runner_id}.
 *
 * <p>Verification refuses ({@link TokenRefused}, {@code E-PRO-007}) a token that does not parse, is
 * not HS256, has a wrong signature, lacks {@code project_id}/{@code exp}/{@code iat}, expired more
 * than the clock skew ago, or was issued more than the skew in the future. Thread-safe.
 */
public final class ProjectTokens {
  /** HS256 needs a key of at least 256 bits. */
  public static final int MIN_SECRET_BYTES = 32;

  private final byte[] secret;
  private final Duration skew;
  private final Clock clock;
  private final MACVerifier verifier;

  public ProjectTokens(byte[] secret, Duration skew, Clock clock) {
    if (secret.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          "the token secret must have at least " + MIN_SECRET_BYTES + " bytes");
    }
    this.secret = secret.clone();
    this.skew = skew;
    this.clock = clock;
    try {
      this.verifier = new MACVerifier(this.secret);
    } catch (JOSEException e) {
      throw new IllegalArgumentException("unusable token secret", e);
    }
  }

  public ProjectTokens(byte[] secret, Duration skew) {
    this(secret, skew, Clock.systemUTC());
  }

  /** A token for the project (and runner, when given) valid for {@code ttl} from now. */
  public String issue(String projectId, Optional<String> runnerId, Duration ttl) {
    Instant now = clock.instant();
    JWTClaimsSet.Builder claims =
        new JWTClaimsSet.Builder()
            .claim("project_id", projectId)
            .issueTime(Date.from(now))
            .expirationTime(Date.from(now.plus(ttl)));
    runnerId.ifPresent(r -> claims.claim("runner_id", r));
    SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims.build());
    try {
      jwt.sign(new MACSigner(secret));
    } catch (JOSEException e) {
      throw new IllegalStateException("signing with a checked secret cannot fail", e);
    }
    return jwt.serialize();
  }

  /** The token's claims, or a refusal with {@code E-PRO-007} saying why. */
  public TokenClaims verify(String token) {
    if (token == null || token.isBlank()) {
      throw refused("no bearer token");
    }
    SignedJWT jwt;
    JWTClaimsSet claims;
    try {
      jwt = SignedJWT.parse(token.trim());
      claims = jwt.getJWTClaimsSet();
    } catch (ParseException e) {
      throw new TokenRefused(Code.E_PRO_007, "the bearer token is malformed", e);
    }
    if (!JWSAlgorithm.HS256.equals(jwt.getHeader().getAlgorithm())) {
      throw refused("the bearer token is not signed with HS256");
    }
    try {
      if (!jwt.verify(verifier)) {
        throw refused("the bearer token's signature is wrong");
      }
    } catch (JOSEException e) {
      throw new TokenRefused(Code.E_PRO_007, "the bearer token cannot be verified", e);
    }
    String projectId;
    String runnerId;
    try {
      projectId = claims.getStringClaim("project_id");
      runnerId = claims.getStringClaim("runner_id");
    } catch (ParseException e) {
      throw new TokenRefused(Code.E_PRO_007, "the bearer token's claims are mistyped", e);
    }
    if (projectId == null || projectId.isBlank()) {
      throw refused("the bearer token has no project_id");
    }
    Date exp = claims.getExpirationTime();
    Date iat = claims.getIssueTime();
    if (exp == null || iat == null) {
      throw refused("the bearer token lacks exp or iat");
    }
    Instant now = clock.instant();
    if (now.isAfter(exp.toInstant().plus(skew))) {
      throw refused("the bearer token expired at " + exp.toInstant());
    }
    if (iat.toInstant().isAfter(now.plus(skew))) {
      throw refused("the bearer token was issued in the future (" + iat.toInstant() + ")");
    }
    return new TokenClaims(
        projectId, Optional.ofNullable(runnerId), iat.toInstant(), exp.toInstant());
  }

  private static TokenRefused refused(String why) {
    return new TokenRefused(Code.E_PRO_007, why);
  }
}
