package io.capsule.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.hub.events.LocalFeed;
import io.capsule.hub.events.TaskEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * The live push of task events across the cluster, one per node: the project's brain publishes each
 * event it appends to a Pekko distributed pub-sub {@link Topic}; every node's subscriber hands it
 * to that node's SSE watchers of the task. A push that is lost (a node that just joined, a brain
 * that just moved) costs only latency: watchers read the journal too, and {@link
 * io.capsule.hub.events.EventOrder} fills gaps and drops repeats.
 */
final class LiveFeed {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One event on the wire: the payload as JSON text, so the serializer needs no JsonNode. */
  record Entry(String taskId, long id, String event, String data) implements HubCbor {}

  private final ActorRef<Topic.Command<Entry>> topic;
  private final Map<String, List<Consumer<TaskEntry>>> watchers = new ConcurrentHashMap<>();

  private LiveFeed(ActorSystem<?> system, String projectId) {
    String name = "capsule-hub-live-" + projectId;
    this.topic =
        system.systemActorOf(Topic.create(Entry.class, name), name + "-topic", Props.empty());
    ActorRef<Entry> subscriber =
        system.systemActorOf(deliver(), name + "-subscriber", Props.empty());
    topic.tell(Topic.subscribe(subscriber));
  }

  /** Starts this node's topic and subscriber for {@code projectId}; once per node and project. */
  static LiveFeed start(ActorSystem<?> system, String projectId) {
    return new LiveFeed(system, projectId);
  }

  /** Publishes one appended event to every node's watchers of the task. */
  void publish(String taskId, TaskEntry e) {
    topic.tell(Topic.publish(new Entry(taskId, e.id(), e.event(), e.data().toString())));
  }

  /**
   * One watcher's listening to a task, started before the watcher asks the brain for the task's
   * history: whatever is pushed in between is kept (up to {@code max} events; past it the journal
   * serves the rest) and handed on first when the watcher's stream subscribes.
   */
  final class Early {
    private final String taskId;
    private final int max;
    private final List<TaskEntry> early = new ArrayList<>();
    private Consumer<TaskEntry> target;
    private final Consumer<TaskEntry> relay = this::relay;

    private Early(String taskId, int max) {
      this.taskId = taskId;
      this.max = max;
      watchers.computeIfAbsent(taskId, k -> new CopyOnWriteArrayList<>()).add(relay);
    }

    private void relay(TaskEntry e) {
      Consumer<TaskEntry> to;
      synchronized (this) {
        if (target == null) {
          if (early.size() < max) {
            early.add(e);
          }
          return;
        }
        to = target;
      }
      to.accept(e);
    }

    /** The watcher's feed: {@code history} (the brain's), what came meanwhile, then live. */
    LocalFeed with(List<TaskEntry> history) {
      return live -> {
        List<TaskEntry> first = new ArrayList<>(history);
        synchronized (this) {
          first.addAll(early);
          early.clear();
          target = live;
        }
        return new LocalFeed.Subscription(first, this::cancel);
      };
    }

    /** Stops listening (the stream ended, or the task was not found). */
    void cancel() {
      watchers.computeIfPresent(
          taskId,
          (k, list) -> {
            list.remove(relay);
            return list.isEmpty() ? null : list;
          });
    }
  }

  /** Starts listening to {@code taskId}'s pushed events for one watcher. */
  Early listen(String taskId, int max) {
    return new Early(taskId, max);
  }

  private Behavior<Entry> deliver() {
    return Behaviors.setup(
        ctx ->
            Behaviors.receive(Entry.class)
                .onMessage(
                    Entry.class,
                    e -> {
                      List<Consumer<TaskEntry>> those = watchers.get(e.taskId());
                      if (those != null) {
                        TaskEntry entry = new TaskEntry(e.id(), e.event(), parse(e.data()));
                        for (Consumer<TaskEntry> w : those) {
                          try {
                            w.accept(entry);
                          } catch (RuntimeException failure) {
                            // One watcher's failure must not stop this actor: it is every
                            // watcher's live push on this node.
                            ctx.getLog()
                                .warn("a watcher of task {} failed its push", e.taskId(), failure);
                          }
                        }
                      }
                      return Behaviors.same();
                    })
                .build());
  }

  private static JsonNode parse(String data) {
    try {
      return JSON.readTree(data);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("a live event's payload is not JSON", e);
    }
  }
}
