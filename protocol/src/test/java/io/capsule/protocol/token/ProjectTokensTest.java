package io.capsule.protocol.token;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.TokenRefused;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProjectTokensTest {
  private static final byte[] SECRET =
      "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
  private static final byte[] OTHER =
      "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.UTF_8);
  private static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");
  private static final Duration SKEW = Duration.ofSeconds(30);

  private static ProjectTokens at(Instant now, byte[] secret) {
    return new ProjectTokens(secret, SKEW, Clock.fixed(now, ZoneOffset.UTC));
  }

  @Test
  void aFreshTokenVerifiesWithItsClaims() {
    String token = at(T0, SECRET).issue("p-1", Optional.of("r-1"), Duration.ofMinutes(5));
    TokenClaims c = at(T0.plusSeconds(60), SECRET).verify(token);
    assertEquals("p-1", c.projectId());
    assertEquals(Optional.of("r-1"), c.runnerId());
    assertEquals(T0, c.issuedAt());
    assertEquals(T0.plusSeconds(300), c.expiresAt());
  }

  @Test
  void theRunnerIdIsOptional() {
    String token = at(T0, SECRET).issue("p-1", Optional.empty(), Duration.ofMinutes(5));
    assertEquals(Optional.empty(), at(T0, SECRET).verify(token).runnerId());
  }

  @Test
  void anExpiredTokenIsRefusedOnlyBeyondTheSkew() {
    String token = at(T0, SECRET).issue("p-1", Optional.empty(), Duration.ofMinutes(1));
    at(T0.plusSeconds(60 + 29), SECRET).verify(token);
    TokenRefused e =
        assertThrows(TokenRefused.class, () -> at(T0.plusSeconds(60 + 31), SECRET).verify(token));
    assertEquals(Code.E_PRO_007, e.code());
    assertTrue(e.getMessage().contains("expired"), e.getMessage());
  }

  @Test
  void aTokenIssuedInTheFutureIsRefused() {
    String token =
        at(T0.plusSeconds(120), SECRET).issue("p", Optional.empty(), Duration.ofHours(1));
    assertThrows(TokenRefused.class, () -> at(T0, SECRET).verify(token));
  }

  @Test
  void aWrongSignatureIsRefused() {
    String token = at(T0, OTHER).issue("p-1", Optional.empty(), Duration.ofMinutes(5));
    TokenRefused e = assertThrows(TokenRefused.class, () -> at(T0, SECRET).verify(token));
    assertTrue(e.getMessage().contains("signature"), e.getMessage());
  }

  @Test
  void anUnsignedTokenIsRefused() {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String header = b64.encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8));
    String body =
        b64.encodeToString(
            "{\"project_id\":\"p\",\"iat\":1,\"exp\":9999999999}".getBytes(StandardCharsets.UTF_8));
    assertThrows(TokenRefused.class, () -> at(T0, SECRET).verify(header + "." + body + "."));
  }

  @Test
  void missingAndMalformedTokensAreRefused() {
    assertEquals(
        Code.E_PRO_007, assertThrows(TokenRefused.class, () -> at(T0, SECRET).verify(null)).code());
    assertEquals(
        Code.E_PRO_007,
        assertThrows(TokenRefused.class, () -> at(T0, SECRET).verify("x.y")).code());
  }

  @Test
  void aShortSecretIsRefusedUpFront() {
    assertThrows(IllegalArgumentException.class, () -> new ProjectTokens(new byte[8], SKEW));
  }

  @Test
  void aFileSourceIsReadAgainOnEveryCall(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("token");
    Files.writeString(file, "one\n");
    TokenSource source = TokenSource.file(file);
    assertEquals("one", source.token());
    Files.writeString(file, "two");
    assertEquals("two", source.token());
    Files.delete(file);
    assertEquals(Code.E_PRO_007, assertThrows(TokenRefused.class, source::token).code());
  }
}
