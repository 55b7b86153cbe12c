package io.capsule.realharness;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Base64;

/**
 * Writes the files a CLI's subscription sign-in leaves in {@code $HOME}, as the CLI itself saves
 * them, with tokens valid far into the future (so no refresh, which would need the real identity
 * service, is ever attempted). The values are dummies: only the suite's fakes ever see them.
 */
final class SavedLogins {
  /** 2100-01-01T00:00:00Z: "far into the future" for every expiry below. */
  static final Instant FAR_FUTURE = Instant.parse("2100-01-01T00:00:00Z");

  static final String CODEX_ACCOUNT = "acct-capsule-fake";
  static final String CLAUDE_TOKEN = "sk-ant-oat01-capsule-real-harness-dummy";

  private SavedLogins() {}

  /**
   * {@code ~/.codex/auth.json} of a ChatGPT sign-in ({@code codex login}): an id token and an
   * access token (unsigned JWTs; Codex reads their claims and expiry, it does not verify them), a
   * refresh token, the account id, and a last refresh of now.
   *
   * @return the access token, which Codex sends as {@code Authorization: Bearer}
   */
  static String codexChatGpt(Path home) throws IOException {
    ObjectNode claims = MessageStream.JSON.createObjectNode();
    claims.put("iss", "https://auth.openai.com");
    claims.put("sub", "user-capsule-fake");
    claims.put("email", "capsule-fake@example.invalid");
    claims.put("exp", FAR_FUTURE.getEpochSecond());
    claims.put("iat", Instant.now().getEpochSecond());
    ObjectNode auth = claims.putObject("https://api.openai.com/auth");
    auth.put("chatgpt_plan_type", "plus");
    auth.put("chatgpt_user_id", "user-capsule-fake");
    auth.put("chatgpt_account_id", CODEX_ACCOUNT);
    String jwt = unsignedJwt(claims);

    ObjectNode file = MessageStream.JSON.createObjectNode();
    file.put("auth_mode", "chatgpt");
    file.putNull("OPENAI_API_KEY");
    ObjectNode tokens = file.putObject("tokens");
    tokens.put("id_token", jwt);
    tokens.put("access_token", jwt);
    tokens.put("refresh_token", "rt-capsule-fake");
    tokens.put("account_id", CODEX_ACCOUNT);
    file.put("last_refresh", Instant.now().toString());
    writePrivate(home.resolve(".codex/auth.json"), file.toPrettyString());
    return jwt;
  }

  /**
   * {@code ~/.claude/.credentials.json} of a Claude subscription sign-in ({@code /login}): the
   * OAuth access token, a refresh token, an expiry (milliseconds) and the scopes.
   *
   * @return the access token, which Claude Code sends as {@code Authorization: Bearer}
   */
  static String claudeAi(Path home) throws IOException {
    ObjectNode file = MessageStream.JSON.createObjectNode();
    ObjectNode oauth = file.putObject("claudeAiOauth");
    oauth.put("accessToken", CLAUDE_TOKEN);
    oauth.put("refreshToken", "sk-ant-ort01-capsule-real-harness-dummy");
    oauth.put("expiresAt", FAR_FUTURE.toEpochMilli());
    oauth.putArray("scopes").add("user:inference").add("user:profile");
    oauth.put("subscriptionType", "pro");
    writePrivate(home.resolve(".claude/.credentials.json"), file.toPrettyString());
    return CLAUDE_TOKEN;
  }

  /**
   * {@code ~/.gemini/settings.json} selecting {@code oauth-personal} and {@code
   * ~/.gemini/oauth_creds.json} with an access token valid until {@link #FAR_FUTURE}, as a Google
   * sign-in saves them.
   */
  static void geminiGoogle(Path home, String accessToken) throws IOException {
    writePrivate(
        home.resolve(".gemini/settings.json"),
        "{\"security\":{\"auth\":{\"selectedType\":\"oauth-personal\"}}}\n");
    ObjectNode creds = MessageStream.JSON.createObjectNode();
    creds.put("access_token", accessToken);
    creds.put("refresh_token", "1//capsule-real-harness-dummy");
    creds.put("scope", "https://www.googleapis.com/auth/cloud-platform openid");
    creds.put("token_type", "Bearer");
    creds.put("expiry_date", FAR_FUTURE.toEpochMilli());
    writePrivate(home.resolve(".gemini/oauth_creds.json"), creds.toPrettyString());
  }

  private static String unsignedJwt(ObjectNode claims) throws IOException {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String header = "{\"alg\":\"none\",\"typ\":\"JWT\"}";
    return b64.encodeToString(header.getBytes(StandardCharsets.UTF_8))
        + "."
        + b64.encodeToString(MessageStream.JSON.writeValueAsBytes(claims))
        + "."
        + b64.encodeToString("unsigned".getBytes(StandardCharsets.UTF_8));
  }

  private static void writePrivate(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
  }
}
