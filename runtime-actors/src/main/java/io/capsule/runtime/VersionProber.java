package io.capsule.runtime;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Runs the harness's version probe (run-semantics §3): {@code binary + version-args}, empty stdin,
 * the granted environment, the working directory. Completes with the version line (first non-empty
 * trimmed line of stdout, else of stderr), or empty when unreadable. The run bounds the wait with
 * its own timer; an implementation also kills the probe after its bound.
 *
 * <p>Threading: may complete on any thread; the run pipes the stage back to itself.
 */
@FunctionalInterface
public interface VersionProber {

  CompletionStage<Optional<String>> probe(
      Path binary, List<String> args, Map<String, String> env, Path workdir);

  /**
   * The tested rule: any whitespace-separated token of the line, with one leading {@code v}
   * dropped, equals an entry of {@code tested}.
   */
  static boolean tested(String versionLine, List<String> tested) {
    for (String token : versionLine.trim().split("\\s+")) {
      String t = token.startsWith("v") ? token.substring(1) : token;
      if (!t.isEmpty() && tested.contains(t)) {
        return true;
      }
    }
    return false;
  }
}
