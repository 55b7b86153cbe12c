package io.capsule.protocol.token;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.ProtocolException.TokenRefused;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** Scopes, {@code nbf} and runner ids, as tables of claims a token may carry. */
class TokenRulesTest {
  private static final byte[] SECRET =
      "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
  private static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");
  private static final Duration SKEW = Duration.ofSeconds(30);
  private static final ProjectTokens AT_T0 =
      new ProjectTokens(SECRET, SKEW, Clock.fixed(T0, ZoneOffset.UTC));

  /**
   * Claims as {@code key=value;…}: {@code iat}, {@code exp}, {@code nbf} are seconds from now;
   * {@code #n} is a number, not a string; {@code NUL}, {@code NL} and {@code EMPTY} stand for those
   * characters and the empty string. Every row signs correctly: only the claims differ. Outcome:
   * {@code scope[/runner]} when accepted, {@code !word} when refused with a message holding {@code
   * word}.
   */
  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # claims                                            | outcome
          iat=0;exp=300                                       | runner
          iat=0;exp=300;scope=runner                          | runner
          iat=0;exp=300;scope=api                             | api
          iat=0;exp=300;scope=admin                           | admin
          iat=0;exp=300;scope=admin;runner_id=r-1             | admin/r-1
          iat=0;exp=300;scope=ADMIN                           | !scope
          iat=0;exp=300;scope=root                            | !scope
          iat=0;exp=300;scope=EMPTY                           | !scope
          iat=0;exp=300;scope=api admin                       | !scope
          iat=0;exp=300;scope=#1                              | !mistyped
          iat=0;exp=300;nbf=0                                 | runner
          iat=0;exp=300;nbf=-100                              | runner
          iat=0;exp=300;nbf=30                                | runner
          iat=0;exp=300;nbf=31                                | !not valid before
          iat=0;exp=900;nbf=600                               | !not valid before
          iat=-60;exp=-31                                     | !expired
          iat=-60;exp=-29                                     | runner
          iat=31;exp=300                                      | !future
          iat=0;exp=300;runner_id=runner-a                    | runner/runner-a
          iat=0;exp=300;runner_id=gpu.box_2                   | runner/gpu.box_2
          iat=0;exp=300;runner_id=A1                          | runner/A1
          iat=0;exp=300;runner_id=EMPTY                       | !runner_id
          iat=0;exp=300;runner_id=-lead                       | !runner_id
          iat=0;exp=300;runner_id=.hidden                     | !runner_id
          iat=0;exp=300;runner_id=a/b                         | !runner_id
          iat=0;exp=300;runner_id=a b                         | !runner_id
          iat=0;exp=300;runner_id=aNLb                        | !runner_id
          iat=0;exp=300;runner_id=aNULb                       | !runner_id
          iat=0;exp=300;runner_id=r\u00e9                     | !runner_id
          iat=0;exp=300;runner_id=r0123456789012345678901234567890123456789012345678901234567890123 | !runner_id
          iat=0;exp=300;runner_id=r012345678901234567890123456789012345678901234567890123456789012 | runner/r012345678901234567890123456789012345678901234567890123456789012
          iat=0;exp=300;runner_id=#7                          | !mistyped
          """)
  void verifiesClaimsAsTheRulesSay(String claims, String outcome) throws Exception {
    String token = sign(claims);
    if (outcome.startsWith("!")) {
      TokenRefused e = assertThrows(TokenRefused.class, () -> AT_T0.verify(token));
      assertEquals(Code.E_PRO_007, e.code());
      assertTrue(e.getMessage().contains(outcome.substring(1)), e.getMessage());
      assertTrue(
          e.getMessage().chars().noneMatch(c -> c < 0x20), "a control character reached the log");
    } else {
      TokenClaims c = AT_T0.verify(token);
      String[] want = outcome.split("/", 2);
      assertEquals(want[0], c.scope().claim());
      assertEquals(want.length == 2 ? Optional.of(want[1]) : Optional.empty(), c.runnerId());
    }
  }

  @ParameterizedTest
  @EnumSource(TokenScope.class)
  void eachScopeIssuedIsTheScopeVerified(TokenScope scope) {
    String token = AT_T0.issue("p", Optional.of("r-1"), scope, Duration.ofMinutes(5));
    assertEquals(scope, AT_T0.verify(token).scope());
  }

  @Test
  void theOldIssueMakesRunnerTokens() {
    String token = AT_T0.issue("p", Optional.empty(), Duration.ofMinutes(5));
    assertEquals(TokenScope.RUNNER, AT_T0.verify(token).scope());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          EMPTY
          ' '
          -lead
          a/b
          aNLb
          aNULb
          r0123456789012345678901234567890123456789012345678901234567890123
          """)
  void aRunnerIdVerifyingWouldRefuseIsRefusedWhenIssued(String runnerId) {
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                AT_T0.issue(
                    "p", Optional.of(text(runnerId)), TokenScope.RUNNER, Duration.ofMinutes(5)));
    assertEquals(Code.E_PRO_007, e.code());
    assertTrue(e.getMessage().contains("runner_id"), e.getMessage());
  }

  @Test
  void aTokenWithoutAProjectIsNotIssued() {
    assertThrows(
        ProtocolException.class,
        () -> AT_T0.issue(" ", Optional.empty(), TokenScope.API, Duration.ofMinutes(5)));
  }

  @ParameterizedTest
  @CsvSource({"runner, true, false, false", "api, false, true, false", "admin, false, true, true"})
  void eachScopeOpensWhatTheRoutesAllow(
      String claim, boolean runnerEndpoint, boolean taskApi, boolean delete) {
    TokenScope s = TokenScope.ofClaim(claim).orElseThrow();
    assertEquals(runnerEndpoint, s.opensRunnerEndpoint());
    assertEquals(taskApi, s.usesTaskApi());
    assertEquals(delete, s.deletes());
  }

  private static String sign(String claims) throws Exception {
    JWTClaimsSet.Builder b = new JWTClaimsSet.Builder().claim("project_id", "p");
    for (String kv : claims.split(";")) {
      String[] f = kv.split("=", 2);
      String key = f[0];
      String value = f[1];
      switch (key) {
        case "iat" -> b.issueTime(at(value));
        case "exp" -> b.expirationTime(at(value));
        case "nbf" -> b.notBeforeTime(at(value));
        default ->
            b.claim(
                key,
                value.startsWith("#")
                    ? (Object) Integer.parseInt(value.substring(1))
                    : text(value));
      }
    }
    SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), b.build());
    jwt.sign(new MACSigner(SECRET));
    return jwt.serialize();
  }

  private static Date at(String secondsFromNow) {
    return Date.from(T0.plusSeconds(Long.parseLong(secondsFromNow)));
  }

  private static String text(String s) {
    return s.equals("EMPTY")
        ? ""
        : s.replace("NUL", "\0").replace("NL", "\n").replace("\\u00e9", "\u00e9");
  }
}
