package io.capsule.hub;

import io.capsule.hub.queue.QueueStore;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RawRunners;
import io.capsule.protocol.ProtocolConfig;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * A project's task book, queue and task API around a brain the test built itself (so it can hold
 * the brain's events, or give the queue a store of its own), bound on 127.0.0.1:0: what {@code
 * ReferenceHub} wires, by hand. The queue holds 10 tasks and says {@code Retry-After: 1}.
 */
record HandApi(TaskBook book, TaskQueue queue, ServerBinding binding) {

  static HandApi bind(ActorSystem<?> system, HubServer brain, String project, QueueStore store)
      throws Exception {
    TaskBook book = new TaskBook();
    TaskQueue queue =
        new TaskQueue(
            brain,
            book,
            project,
            10,
            Duration.ofSeconds(1),
            store,
            ProtocolConfig.defaults().frameCapBytes());
    HubApi routes =
        new HubApi(
            brain,
            book,
            RawRunners.TOKENS,
            project,
            queue,
            new RunnerRoll(java.time.Clock.systemUTC(), Duration.ofMinutes(1)),
            Optional.empty());
    ServerBinding binding =
        Http.get(system)
            .newServerAt("127.0.0.1", 0)
            .bind(routes.route())
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    return new HandApi(book, queue, binding);
  }

  /** The API's base URL. */
  String url() {
    return "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  /** Unbinds the API (the brain is the test's to close). */
  void unbind() throws Exception {
    binding.unbind().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
