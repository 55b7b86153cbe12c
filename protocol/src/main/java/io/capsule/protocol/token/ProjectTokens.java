package io.capsule.protocol.token;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.ProtocolException.TokenRefused;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Issues and verifies the project-scoped, short-lived bearer tokens of runner protocol v1: a JWT
 * signed with HS256 over a shared secret, carrying {@code project_id}, {@code iat}, {@code exp},
 * {@code scope} ({@link TokenScope}) and optionally {@code runner_id}.
 *
 * <p>Verification refuses ({@link TokenRefused}, {@code E-PRO-007}) a token that does not parse, is
 * not HS256, has a wrong signature, lacks {@code project_id}/{@code exp}/{@code iat}, expired more
 * than the clock skew ago, was issued or becomes valid ({@code nbf}) more than the skew in the
 * future, carries a {@code runner_id} that is not a {@link #isRunnerId runner id}, or a {@code
 * scope} that is not one of {@link TokenScope}'s. A token with no {@code scope} is a runner token.
 * Issuing refuses, with the same code, a runner id it would refuse to verify. Thread-safe.
 */
public final class ProjectTokens {
  /** HS256 needs a key of at least 256 bits. */
  public static final int MIN_SECRET_BYTES = 32;

  /**
   * A runner id: 1-64 of {@code A-Za-z0-9._-}, starting with a letter or digit. It becomes part of
   * journal keys, URLs ({@code /v1/runners/...}), SSE data and log lines, so it holds no slash,
   * space or control character, and it is never empty (an empty id cannot be told from "none").
   */
  private static final Pattern RUNNER_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

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

  /** A runner token for the project (and runner, when given) valid for {@code ttl} from now. */
  public String issue(String projectId, Optional<String> runnerId, Duration ttl) {
    return issue(projectId, runnerId, TokenScope.RUNNER, ttl);
  }

  /**
   * A token of {@code scope} for the project (and runner, when given) valid for {@code ttl} from
   * now.
   *
   * @throws ProtocolException {@code E-PRO-007} when {@code runnerId} is not a runner id (verifying
   *     would refuse the token)
   */
  public String issue(String projectId, Optional<String> runnerId, TokenScope scope, Duration ttl) {
    Objects.requireNonNull(scope, "scope");
    if (projectId == null || projectId.isBlank()) {
      throw new ProtocolException(
          Diagnostic.of(Code.E_PRO_007, "cannot issue a token without a project")
              .withHint("name the project (capsule hub token --project P)"));
    }
    runnerId.ifPresent(
        r -> {
          if (!isRunnerId(r)) {
            throw new ProtocolException(
                Diagnostic.of(
                        Code.E_PRO_007,
                        "cannot issue a token for runner_id " + quoted(r) + ": " + RUNNER_ID_RULE)
                    .withHint("pick a runner id like runner-a or gpu.box-2"));
          }
        });
    Instant now = clock.instant();
    JWTClaimsSet.Builder claims =
        new JWTClaimsSet.Builder()
            .claim("project_id", projectId)
            .claim("scope", scope.claim())
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

  /** Whether {@code id} is a runner id a token may carry (see the pattern's reasons). */
  public static boolean isRunnerId(String id) {
    return id != null && RUNNER_ID.matcher(id).matches();
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
    String scopeClaim;
    try {
      projectId = claims.getStringClaim("project_id");
      runnerId = claims.getStringClaim("runner_id");
      scopeClaim = claims.getStringClaim("scope");
    } catch (ParseException e) {
      throw new TokenRefused(Code.E_PRO_007, "the bearer token's claims are mistyped", e);
    }
    if (projectId == null || projectId.isBlank()) {
      throw refused("the bearer token has no project_id");
    }
    if (runnerId != null && !isRunnerId(runnerId)) {
      throw refused(
          "the bearer token's runner_id "
              + quoted(runnerId)
              + " is malformed ("
              + RUNNER_ID_RULE
              + ")");
    }
    TokenScope scope =
        scopeClaim == null
            ? TokenScope.RUNNER
            : TokenScope.ofClaim(scopeClaim)
                .orElseThrow(
                    () ->
                        refused("the bearer token's scope " + quoted(scopeClaim) + " is unknown"));
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
    Date nbf = claims.getNotBeforeTime();
    if (nbf != null && nbf.toInstant().isAfter(now.plus(skew))) {
      throw refused("the bearer token is not valid before " + nbf.toInstant());
    }
    return new TokenClaims(
        projectId, Optional.ofNullable(runnerId), iat.toInstant(), exp.toInstant(), scope);
  }

  private static final String RUNNER_ID_RULE =
      "a runner id is 1-64 of A-Za-z0-9._- starting with a letter or digit";

  /**
   * A claim value for a message: JSON-quoted with control characters escaped and cut at 80
   * characters, so a hostile value cannot forge log lines or flood them.
   */
  private static String quoted(String value) {
    StringBuilder b = new StringBuilder("\"");
    value
        .codePoints()
        .limit(80)
        .forEach(
            c -> {
              if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
                b.append(String.format("\\u%04x", c));
              } else {
                b.appendCodePoint(c);
              }
            });
    return b.append(value.codePointCount(0, value.length()) > 80 ? "…\"" : "\"").toString();
  }

  private static TokenRefused refused(String why) {
    return new TokenRefused(Code.E_PRO_007, why);
  }
}
