package io.capsule.runtime.harness;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The version probe's rules (docs/run-semantics.md §3), pure: which line is the version, and
 * whether it is a tested one. Running the probe is {@link HelperCommands}'s job.
 */
public final class VersionProbe {

  /**
   * What the probe found.
   *
   * @param version the version line, empty when unreadable (the launch request's {@code
   *     harness-version} is then none)
   * @param tested whether a token of the line is a tested version
   * @param warning {@code W-RUN-002} when untested or unreadable
   */
  public record Result(Optional<String> version, boolean tested, Optional<Diagnostic> warning) {
    public Result {
      Objects.requireNonNull(version, "version");
      Objects.requireNonNull(warning, "warning");
    }
  }

  private VersionProbe() {}

  /** The first non-empty trimmed line of stdout, else of stderr. */
  public static Optional<String> versionLine(String stdout, String stderr) {
    return firstNonEmptyLine(stdout).or(() -> firstNonEmptyLine(stderr));
  }

  /**
   * Tested when any whitespace-separated token, with one leading {@code v} dropped, equals an entry
   * of {@code testedVersions} exactly.
   */
  public static boolean isTested(String line, List<String> testedVersions) {
    for (String token : line.trim().split("\\s+")) {
      String bare = token.startsWith("v") ? token.substring(1) : token;
      if (!bare.isEmpty() && testedVersions.contains(bare)) {
        return true;
      }
    }
    return false;
  }

  /** Judges a probe's outcome: only a command that finished within the bound is read. */
  public static Result judge(CommandOutcome outcome, String harness, List<String> testedVersions) {
    Optional<String> line =
        outcome instanceof CommandOutcome.Finished f
            ? versionLine(f.stdout(), f.stderr())
            : Optional.empty();
    if (line.isEmpty()) {
      return new Result(
          Optional.empty(),
          false,
          Optional.of(
              Diagnostic.of(
                  Code.W_RUN_002,
                  "the version of " + harness + " is unreadable (" + why(outcome) + ")",
                  Map.of("harness", harness))));
    }
    boolean tested = isTested(line.get(), testedVersions);
    Optional<Diagnostic> warning =
        tested
            ? Optional.empty()
            : Optional.of(
                Diagnostic.of(
                    Code.W_RUN_002,
                    harness + " version '" + line.get() + "' is not a tested version",
                    Map.of("harness", harness, "tested", String.join(", ", testedVersions))));
    return new Result(line, tested, warning);
  }

  private static String why(CommandOutcome outcome) {
    if (outcome instanceof CommandOutcome.TimedOut t) {
      return "no answer within " + t.bound().toMillis() + " ms";
    }
    if (outcome instanceof CommandOutcome.NotStarted n) {
      return "could not start: " + n.reason();
    }
    return "it printed nothing";
  }

  private static Optional<String> firstNonEmptyLine(String text) {
    return text.lines().map(String::trim).filter(l -> !l.isEmpty()).findFirst();
  }
}
