package io.capsule.hub.metrics;

import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.TaskReportBody;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One INFO line per step an operator cares about, from the hub's events and its queue: a runner
 * connected (with its version and what it announced) or disconnected, a task queued, placed on a
 * runner, started there, finished with its outcome. Nothing per frame at INFO (the frames
 * themselves are at DEBUG under the protocol's loggers).
 *
 * <p>What is never logged: a token, a task's goal or body, a report's summary, streamed text. A
 * line names ids, outcomes, codes and counts only, so a log can be shared to debug the fleet
 * without leaking what the agents were asked or said.
 *
 * <p>Threading: {@link #on} is called from the hub's one event consumer, the queue's steps from
 * request threads too; it keeps only a concurrent set.
 */
public final class HubEventLog implements QueueWatch {
  private static final Logger LOG = LoggerFactory.getLogger(HubEventLog.class);

  /** Tasks whose start was logged; forgotten at their report, so bounded by tasks in flight. */
  private final Set<String> started = ConcurrentHashMap.newKeySet();

  @Override
  public void queued(String taskId, String capsule) {
    LOG.info("task {} queued (capsule {})", taskId, capsule);
  }

  @Override
  public void placed(String taskId, String runner, java.time.Instant since) {
    LOG.info(
        "task {} placed on runner {} after {} s",
        taskId,
        runner,
        String.format(
            java.util.Locale.ROOT,
            "%.1f",
            java.time.Duration.between(since, java.time.Instant.now()).toMillis() / 1000.0));
  }

  public void on(HubEvent event) {
    if (event instanceof HubEvent.RunnerUp up) {
      var caps = up.hello() == null ? java.util.List.<String>of() : up.hello().capabilities();
      LOG.info(
          "runner {} connected (version {}, capsules {}, slots {})",
          up.runner(),
          up.hello() == null ? "?" : up.hello().runnerVersion(),
          caps.stream()
              .filter(c -> c.startsWith(Capabilities.CAPSULE_PREFIX))
              .map(c -> c.substring(Capabilities.CAPSULE_PREFIX.length()))
              .toList(),
          caps.stream()
              .filter(c -> c.startsWith(Capabilities.SLOTS_PREFIX))
              .findFirst()
              .map(c -> c.substring(Capabilities.SLOTS_PREFIX.length()))
              .orElse("unannounced"));
    } else if (event instanceof HubEvent.RunnerDown down) {
      LOG.info("runner {} disconnected: {}", down.runner(), down.reason());
    } else if (event instanceof HubEvent.Progress p && started.add(p.progress().taskId())) {
      LOG.info("task {} started on runner {}", p.progress().taskId(), p.runner());
    } else if (event instanceof HubEvent.Report r) {
      TaskReportBody body = r.report().report();
      started.remove(r.report().taskId());
      LOG.info(
          "task {} finished: {}{} on runner {} ({} tokens)",
          r.report().taskId(),
          body.status(),
          body.failureType().map(f -> " (" + f + ")").orElse(""),
          r.runner(),
          body.usage().total());
    }
  }
}
