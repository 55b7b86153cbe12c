package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.LoginState;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LoginVerdictTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** granted names (space-separated), driver config JSON, whether a logged-out verdict refuses. */
  @ParameterizedTest(name = "[{0}] {1} -> refuses {2}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
          HOME PATH                 | -                                                    | true
          HOME PATH                 | {}                                                   | true
          HOME PATH OPENAI_API_KEY  | -                                                    | false
          HOME PATH                 | {"env":{"OPENAI_API_KEY":"sk"}}                      | false
          HOME PATH                 | {"env":{"FAKE_PROVIDER_KEY":"k"},"extra_args":[]}    | false
          HOME PATH                 | {"env":{"ANTHROPIC_AUTH_TOKEN":"t"}}                 | false
          HOME PATH                 | {"env":{"RUST_LOG":"warn"}}                          | true
          HOME PATH                 | {"env":{"CAPSULE_BRIDGE_TOKEN":"t"}}                 | true
          HOME PATH KEYBOARD        | {"env":"not an object"}                              | true
          """)
  void loggedOutRefusesOnlyWithoutACredentialInTheRunsEnvironment(
      String granted, String config, boolean refuses) throws Exception {
    Optional<JsonNode> tree = Optional.ofNullable(config).map(LoginVerdictTest::parse);
    LoginVerdict v =
        LoginVerdict.of(
            new LoginState.LoggedOut("run `codex login`"),
            "run `codex login`",
            Arrays.asList(granted.trim().split("\\s+")),
            tree);
    assertEquals(refuses, v.refuses(), v.row());
    assertEquals(refuses, v.row().startsWith("logged out: run `codex login`"), v.row());
  }

  @Test
  void theRowNamesTheCredentialsAndSaysWhyTheCheckCannotAnswer() {
    LoginVerdict v =
        LoginVerdict.of(
            new LoginState.LoggedOut("x"),
            "x",
            List.of("OPENAI_API_KEY", "HOME"),
            Optional.of(parse("{\"env\":{\"FAKE_PROVIDER_KEY\":\"secret-value\"}}")));
    assertFalse(v.refuses());
    assertTrue(v.row().contains("FAKE_PROVIDER_KEY, OPENAI_API_KEY"), v.row());
    assertTrue(v.row().contains("does not see"), v.row());
    assertFalse(v.row().contains("secret-value"), v.row());
  }

  @Test
  void loggedInAndUnknownNeverRefuse() {
    assertEquals(
        new LoginVerdict("logged in", false),
        LoginVerdict.of(new LoginState.LoggedIn(), "", List.of(), Optional.empty()));
    assertEquals(
        new LoginVerdict("unknown: odd", false),
        LoginVerdict.of(new LoginState.Unknown("odd"), "odd", List.of(), Optional.empty()));
  }

  private static JsonNode parse(String json) {
    try {
      return JSON.readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }
}
