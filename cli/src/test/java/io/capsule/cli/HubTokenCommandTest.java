package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenClaims;
import io.capsule.protocol.token.TokenScope;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** {@code capsule hub token}: scopes, a refused runner id, and help for every option. */
class HubTokenCommandTest {
  @TempDir Path dir;

  private Path secret() throws Exception {
    return Files.writeString(dir.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
  }

  private TokenClaims verify(String token) throws Exception {
    return new ProjectTokens(
            Secrets.read(secret()), CapsuleSettings.load().protocol().tokenClockSkew())
        .verify(token.trim());
  }

  @ParameterizedTest
  @CsvSource({"runner, RUNNER", "api, API", "admin, ADMIN"})
  void theScopeAskedForIsTheScopeVerified(String flag, TokenScope scope) throws Exception {
    Cli.Result r =
        Cli.run(
            "hub",
            "token",
            "--project",
            "demo",
            "--secret-file",
            secret().toString(),
            "--scope",
            flag);
    assertEquals(ExitCodes.DONE, r.exit(), r.err());
    TokenClaims c = verify(r.out());
    assertEquals(scope, c.scope());
    assertEquals("demo", c.projectId());
  }

  @Test
  void withoutScopeTheTokenIsARunnerToken() throws Exception {
    Cli.Result r =
        Cli.run(
            "hub",
            "token",
            "--project",
            "demo",
            "--secret-file",
            secret().toString(),
            "--runner-id",
            "gpu-1");
    assertEquals(ExitCodes.DONE, r.exit(), r.err());
    TokenClaims c = verify(r.out());
    assertEquals(TokenScope.RUNNER, c.scope());
    assertEquals(Optional.of("gpu-1"), c.runnerId());
  }

  @Test
  void anUnknownScopeIsAUsageError() throws Exception {
    Cli.Result r =
        Cli.run(
            "hub",
            "token",
            "--project",
            "demo",
            "--secret-file",
            secret().toString(),
            "--scope",
            "root");
    assertEquals(ExitCodes.USAGE, r.exit());
    assertTrue(r.err().contains("runner, api or admin"), r.err());
    assertEquals("", r.out());
  }

  @Test
  void anEmptyRunnerIdIsRefusedWithItsCodeAndNoTokenIsPrinted() throws Exception {
    Cli.Result r =
        Cli.run(
            "hub",
            "token",
            "--project",
            "demo",
            "--secret-file",
            secret().toString(),
            "--runner-id",
            "");
    assertNotEquals(ExitCodes.DONE, r.exit());
    assertTrue(r.err().contains("E-PRO-007"), r.err());
    assertTrue(r.err().contains("runner_id"), r.err());
    assertEquals("", r.out());
  }

  @Test
  void everyOptionHasHelp() {
    Cli.Result r = Cli.run("hub", "token", "--help");
    assertEquals(ExitCodes.DONE, r.exit(), r.err());
    CommandLine.Model.CommandSpec token =
        CapsuleMain.commandLine()
            .getSubcommands()
            .get("hub")
            .getSubcommands()
            .get("token")
            .getCommandSpec();
    for (CommandLine.Model.OptionSpec o : token.options()) {
      String text = String.join(" ", o.description());
      assertTrue(!text.isBlank(), o.longestName() + " has no --help text");
      assertTrue(r.out().contains(o.longestName()), o.longestName() + " missing from\n" + r.out());
    }
    assertTrue(token.options().size() >= 7, "the options were not all seen: " + token.options());
  }
}
