package io.capsule.cli;

import io.capsule.config.settings.CapsuleSettings;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code capsule hub token}: a signed token for one project's runners or API clients. */
@Command(
    name = "token",
    mixinStandardHelpOptions = true,
    description = "Print a token for the project (a signed JWT, HS256).")
final class HubTokenCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--project",
      required = true,
      description = "the project the token is for (its project_id claim)")
  String project;

  @Option(
      names = "--secret-file",
      required = true,
      description = "the hub's signing secret (at least 32 bytes; the hub's --secret-file)")
  Path secretFile;

  @Option(
      names = "--ttl",
      defaultValue = "10m",
      converter = DurationConverter.class,
      description = "how long the token is valid, e.g. 90s, 15m, 12h (default ${DEFAULT-VALUE})")
  Duration ttl;

  @Option(
      names = "--runner-id",
      description =
          "name the runner (several runners per project): 1-64 of A-Za-z0-9._-, starting with"
              + " a letter or digit")
  Optional<String> runnerId;

  @Option(
      names = "--scope",
      defaultValue = "runner",
      converter = ScopeConverter.class,
      description =
          "runner: opens only the runner endpoint; api: submits, reads and cancels tasks; admin:"
              + " also deletes them (default ${DEFAULT-VALUE})")
  TokenScope scope;

  @Override
  public Integer call() {
    ProjectTokens tokens =
        new ProjectTokens(
            Secrets.read(secretFile), CapsuleSettings.load().protocol().tokenClockSkew());
    spec.commandLine().getOut().println(tokens.issue(project, runnerId, scope, ttl));
    spec.commandLine().getOut().flush();
    return ExitCodes.DONE;
  }

  /** {@code runner|api|admin}, as the claim spells them; anything else is a usage error. */
  static final class ScopeConverter implements CommandLine.ITypeConverter<TokenScope> {
    @Override
    public TokenScope convert(String value) {
      return TokenScope.ofClaim(value)
          .orElseThrow(
              () ->
                  new CommandLine.TypeConversionException(
                      "expected runner, api or admin, got '" + value + "'"));
    }
  }
}
