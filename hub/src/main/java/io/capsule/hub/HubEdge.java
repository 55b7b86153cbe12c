package io.capsule.hub;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.entity;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.onSuccess;
import static org.apache.pekko.http.javadsl.server.Directives.optionalHeaderValueByName;
import static org.apache.pekko.http.javadsl.server.Directives.parameterOptional;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.reject;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.events.TaskEntry;
import io.capsule.hub.events.TaskEventStream;
import io.capsule.hub.standing.NodeStanding;
import io.capsule.hub.task.TaskEntity;
import io.capsule.hub.web.Readiness;
import io.capsule.protocol.token.ProjectTokens;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.http.javadsl.marshalling.sse.EventStreamMarshalling;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.stream.javadsl.Source;

/**
 * What every hub node serves over HTTP besides the runner endpoint: its own health ({@code
 * /healthz}, {@code /readyz}: this node's, not the brain's), a task's server-sent events (streamed
 * from this node: the journal plus the cluster's live push), and everything else of the task API
 * and the page, asked of the project's brain wherever it runs. An ask that the brain does not
 * answer in time (it is starting, or moving after its node died) is 503 with {@code Retry-After}
 * and {@code E-HUB-007}: never a hang.
 */
final class HubEdge {
  /** How a node reaches the brain: its sharded entity, or its actor on this node. */
  interface Brain {
    void tell(HubBrain.Command message);

    <R> CompletionStage<R> ask(Function<ActorRef<R>, HubBrain.Command> message, Duration timeout);

    /** The brain as a sharded entity: on whichever node sharding placed it. */
    static Brain of(EntityRef<HubBrain.Command> entity) {
      return new Brain() {
        @Override
        public void tell(HubBrain.Command message) {
          entity.tell(message);
        }

        @Override
        public <R> CompletionStage<R> ask(
            Function<ActorRef<R>, HubBrain.Command> message, Duration timeout) {
          return entity.ask(message::apply, timeout);
        }
      };
    }

    /** The brain as a plain actor of this node (a hub without a store's cluster). */
    static Brain of(ActorRef<HubBrain.Command> actor, Scheduler scheduler) {
      return new Brain() {
        @Override
        public void tell(HubBrain.Command message) {
          actor.tell(message);
        }

        @Override
        public <R> CompletionStage<R> ask(
            Function<ActorRef<R>, HubBrain.Command> message, Duration timeout) {
          return AskPattern.ask(actor, message::apply, timeout, scheduler);
        }
      };
    }
  }

  /** What a client waits before trying again when the brain did not answer. */
  private static final Duration RETRY_AFTER = Duration.ofSeconds(2);

  private final ActorSystem<?> system;
  private final ProjectTokens tokens;
  private final String projectId;
  private final Brain brain;
  private final Duration askTimeout;
  private final LiveFeed live;
  private final Optional<JdbcReadJournal> reads;
  private final TaskEventStream.Settings sse;
  private final Readiness readiness;
  private final NodeStanding standing;

  HubEdge(
      ActorSystem<?> system,
      ProjectTokens tokens,
      String projectId,
      Brain brain,
      Duration askTimeout,
      LiveFeed live,
      Optional<JdbcReadJournal> reads,
      TaskEventStream.Settings sse) {
    this.system = system;
    this.tokens = tokens;
    this.projectId = projectId;
    this.brain = brain;
    this.askTimeout = askTimeout;
    this.live = live;
    this.reads = reads;
    this.sse = sse;
    this.readiness = Readiness.of(system);
    this.standing = NodeStanding.get(system);
  }

  Route route() {
    return concat(
        path("healthz", () -> get(() -> complete(text(StatusCodes.OK, "ok\n")))),
        path("readyz", () -> get(this::ready)),
        // A cut-off node answers nothing of the task API: its brain may already run elsewhere,
        // and a client sent to another node gets the truth there.
        extractRequest(r -> standing.cutOff() ? complete(cutOff()) : reject()),
        path(
            PathMatchers.segment("v1").slash("tasks").slash(PathMatchers.segment()).slash("events"),
            id -> get(() -> HubApi.authorized(tokens, projectId, false, () -> events(id)))),
        extractRequest(
            request ->
                entity(
                    Unmarshaller.entityToString(),
                    body ->
                        onSuccess(
                            this.<ApiCall.Reply>ask(
                                    r -> new HubBrain.Call(ApiCall.of(request, body), r))
                                .thenApply(
                                    reply ->
                                        reply
                                            .map(ApiCall.Reply::toResponse)
                                            .orElseGet(HubEdge::unavailable)),
                            response -> complete(response)))));
  }

  private Route ready() {
    return onSuccess(
        readiness.check().exceptionally(e -> false),
        ok ->
            complete(
                ok
                    ? text(StatusCodes.OK, "ready\n")
                    : text(StatusCodes.SERVICE_UNAVAILABLE, "not ready\n")));
  }

  /**
   * The task's events after {@code Last-Event-ID} (or {@code ?after=}). Listening to the live push
   * starts before the brain is asked whether the task exists, so nothing pushed in between is
   * missed; the journal (when the hub has a store) fills any gap.
   */
  private Route events(String id) {
    return optionalHeaderValueByName(
        "Last-Event-ID",
        last ->
            parameterOptional(
                "after",
                after -> {
                  long from = HubApi.parseId(last.or(() -> after).orElse("0"));
                  LiveFeed.Early early = live.listen(id, sse.buffer());
                  return onSuccess(
                      this.<HubBrain.Found>ask(r -> new HubBrain.Lookup(id, from, r)),
                      found -> {
                        if (found.isEmpty()) {
                          early.cancel();
                          return complete(unavailable());
                        }
                        if (!"task".equals(found.get().state())) {
                          early.cancel();
                          return HubApi.noSuchTask(id);
                        }
                        var history =
                            found.get().history().stream()
                                .map(e -> new TaskEntry(e.id(), e.event(), json(e.data())))
                                .toList();
                        return complete(
                            StatusCodes.OK,
                            TaskEventStream.of(system, journal(id), early.with(history), from, sse),
                            EventStreamMarshalling.toEventStream());
                      });
                }));
  }

  private Source<TaskEntry, NotUsed> journal(String taskId) {
    String pid = TaskEntity.KEY.name() + "|" + TaskEntity.entityId(projectId, taskId);
    return reads.map(r -> TaskEventStream.journal(r, pid)).orElseGet(Source::empty);
  }

  /** The brain's answer, or empty when it did not come in time. */
  private <R> CompletionStage<Optional<R>> ask(Function<ActorRef<R>, HubBrain.Command> message) {
    return brain
        .ask(message, askTimeout)
        .handle((r, e) -> Optional.ofNullable(e == null ? r : null));
  }

  private static HttpResponse cutOff() {
    Diagnostic d =
        Diagnostic.of(
            Code.E_HUB_009,
            "this hub node is cut off from its cluster; send the request to another node");
    return HttpResponse.create()
        .withStatus(StatusCodes.SERVICE_UNAVAILABLE)
        .addHeader(RetryAfter.create(RETRY_AFTER.toSeconds()))
        .withEntity(
            HttpEntities.create(
                ContentTypes.APPLICATION_JSON, TaskQueue.Answer.body(d).toString()));
  }

  private static HttpResponse unavailable() {
    Diagnostic d =
        Diagnostic.of(
            Code.E_HUB_007,
            "the project's hub did not answer; it is starting or moving to another node");
    return HttpResponse.create()
        .withStatus(StatusCodes.SERVICE_UNAVAILABLE)
        .addHeader(RetryAfter.create(RETRY_AFTER.toSeconds()))
        .withEntity(
            HttpEntities.create(
                ContentTypes.APPLICATION_JSON, TaskQueue.Answer.body(d).toString()));
  }

  /** Health answers, never cached (as the page's routes answer them, {@code HubWeb}). */
  private static HttpResponse text(org.apache.pekko.http.javadsl.model.StatusCode s, String t) {
    return HttpResponse.create()
        .withStatus(s)
        .withEntity(HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8, t))
        .addHeader(
            org.apache.pekko.http.javadsl.model.headers.RawHeader.create(
                "Cache-Control", "no-store"));
  }

  private static com.fasterxml.jackson.databind.JsonNode json(String data) {
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper().readTree(data);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("an event's payload is not JSON", e);
    }
  }
}
