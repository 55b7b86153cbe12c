package io.capsule.runtime;

import io.capsule.runtime.harness.CommandOutcome;
import io.capsule.runtime.harness.HelperCommands;
import io.capsule.runtime.harness.VersionProbe;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Runs the harness's version probe (docs/run-semantics.md §3): {@code binary + version-args}, empty
 * stdin, the granted environment, the working directory. Completes with the version line (first
 * non-empty trimmed line of stdout, else of stderr), or empty when unreadable. The run bounds the
 * wait with its own timer; an implementation also kills the probe after its bound.
 *
 * <p>Threading: may complete on any thread; the run pipes the stage back to itself.
 */
@FunctionalInterface
public interface VersionProber {

  CompletionStage<Optional<String>> probe(
      Path binary, List<String> args, Map<String, String> env, Path workdir);

  /**
   * The tested rule of docs/run-semantics.md §3 (the harness side's {@link VersionProbe#isTested}).
   */
  static boolean tested(String versionLine, List<String> tested) {
    return VersionProbe.isTested(versionLine, tested);
  }

  /**
   * The default prober: the harness side's bounded helper command, read by {@link
   * VersionProbe#versionLine} (only a command that finished within the bound is read).
   */
  static VersionProber of(HelperCommands helpers) {
    return (binary, args, env, workdir) ->
        helpers
            .run(binary, args, env, workdir)
            .thenApply(
                outcome ->
                    outcome instanceof CommandOutcome.Finished f
                        ? VersionProbe.versionLine(f.stdout(), f.stderr())
                        : Optional.empty());
  }
}
