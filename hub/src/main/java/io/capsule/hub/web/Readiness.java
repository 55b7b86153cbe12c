package io.capsule.hub.web;

import com.typesafe.config.Config;
import io.capsule.hub.standing.NodeStanding;
import io.capsule.hub.standing.Standing;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Whether this hub can take work now: every check answers true within its deadline. A check that
 * fails, throws or is late counts as not ready; {@code /readyz} says only yes or no (what failed is
 * logged, never served: the endpoint is unauthenticated).
 */
@FunctionalInterface
public interface Readiness {
  /**
   * How long {@code /readyz} waits for all checks: load balancers probe every few seconds and time
   * out after a few more; 3 s answers before theirs and is still far above a healthy store's write.
   */
  Duration DEADLINE = Duration.ofSeconds(3);

  /** Completes with true when ready; may complete exceptionally (counts as not ready). */
  CompletionStage<Boolean> check();

  /** Always ready: a hub with nothing to probe (no store, no cluster). */
  static Readiness always() {
    return () -> CompletableFuture.completedFuture(true);
  }

  /** Ready when every one of {@code checks} is, each bounded by {@link #DEADLINE}. */
  static Readiness all(List<Readiness> checks) {
    return () -> {
      CompletableFuture<Boolean> acc = CompletableFuture.completedFuture(true);
      for (Readiness r : checks) {
        CompletableFuture<Boolean> one =
            r.check()
                .toCompletableFuture()
                .orTimeout(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionally(e -> false);
        acc = acc.thenCombine(one, Boolean::logicalAnd);
      }
      return acc;
    };
  }

  /**
   * What {@code system} runs with: its cluster member must be Up and hear most of its cluster
   * ({@link NodeStanding}: a cut-off node is not ready), when the provider is the cluster's, as
   * every hub's is; and its JDBC store must take a write ({@link StoreProbe}) when persistence goes
   * to {@code jdbc-journal}.
   */
  static Readiness of(ActorSystem<?> system) {
    Config c = system.settings().config();
    List<Readiness> checks = new java.util.ArrayList<>();
    if ("cluster".equals(c.getString("pekko.actor.provider"))) {
      NodeStanding standing = NodeStanding.get(system);
      checks.add(
          () -> CompletableFuture.completedFuture(standing.now() == Standing.Verdict.SERVING));
    }
    StoreProbe.of(system).ifPresent(checks::add);
    return checks.isEmpty() ? always() : all(checks);
  }
}
