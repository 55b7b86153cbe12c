package io.capsule.hub;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.delete;
import static org.apache.pekko.http.javadsl.server.Directives.entity;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.onComplete;
import static org.apache.pekko.http.javadsl.server.Directives.onSuccess;
import static org.apache.pekko.http.javadsl.server.Directives.optionalHeaderValueByName;
import static org.apache.pekko.http.javadsl.server.Directives.parameterOptional;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.hub.events.TaskEventStream;
import io.capsule.hub.placement.RunnerView;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RunnerInfo;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenClaims;
import java.util.Comparator;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RetryAfter;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;

/**
 * The reference hub's HTTP API next to the runner endpoint. Every request carries a bearer token of
 * the hub's project with the api or admin scope ({@code capsule hub token --scope api}; a runner
 * token gets 403, E-PRO-012); JSON in and out.
 *
 * <ul>
 *   <li>{@code POST /v1/tasks}: {@code {"capsule": NAME, "goal": TEXT} } or a full {@code "task"}
 *       (TaskSpec), optional {@code runner}, {@code model}, {@code session}, {@code budget}, {@code
 *       role}, {@code allowed_tools}, checked whole by {@link TaskRequest} (400 with every JSON
 *       path); placed on that runner or the least loaded one that runs the capsule and has a free
 *       slot (201, {@code assigned}), else queued (201, {@code queued}; placed when a runner frees
 *       a slot or connects), or 429 with {@code Retry-After} when the queue is full.
 *   <li>{@code DELETE /v1/tasks/{id}} (admin tokens only): forgets a finished task, stored first so
 *       a restart keeps it forgotten: 204; 409 while it runs, 404 when unknown.
 *   <li>{@code GET /v1/tasks[?state=S][&capsule=C]}: every task (or those in state S, of capsule
 *       C), by id: id, capsule, runner, state, events, whether a cancel was requested (no bodies).
 *   <li>{@code GET /v1/tasks/{id}}: state, counts and the report once it arrived.
 *   <li>{@code POST /v1/tasks/{id}/cancel}: 200 for a queued task (canceled at once, never placed),
 *       202 when a cancel was sent, 409 after the report.
 *   <li>{@code GET /v1/tasks/{id}/events}: server-sent events, one per applied progress frame
 *       ({@code id} = the runner's seq, {@code event} = the progress kind, {@code data} = the
 *       payload) and finally {@code event: report}; resumable with {@code Last-Event-ID} or {@code
 *       ?after=N}. Served by every node's {@link HubEdge} (a stream cannot cross to the brain as
 *       one reply): with a store, read from the task's journal plus the cluster's live push ({@link
 *       TaskEventStream}); a watcher that falls behind gets a last {@code event: error} ({@code
 *       E-API-007}).
 *   <li>{@code GET /v1/runners}: every connected runner, and a disconnected one for {@code
 *       capsule.hub.runner-age-out} after it dropped: id, connected, its capabilities, the capsules
 *       and slots it announced (as placement reads them), its open tasks and how many.
 * </ul>
 */
final class HubApi {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HubServer hub;
  private final TaskBook book;
  private final ProjectTokens tokens;
  private final String projectId;
  private final TaskQueue queue;
  private final Optional<JdbcReadJournal> reads;
  private final RunnerRoll roll;

  /**
   * @param reads the store's read side when the hub keeps a journal: the edge then streams task
   *     events from it, and the brain's book keeps no event logs
   */
  HubApi(
      HubServer hub,
      TaskBook book,
      ProjectTokens tokens,
      String projectId,
      TaskQueue queue,
      RunnerRoll roll,
      Optional<JdbcReadJournal> reads) {
    this.roll = roll;
    this.reads = reads;
    this.queue = queue;
    this.hub = hub;
    this.book = book;
    this.tokens = tokens;
    this.projectId = projectId;
  }

  Route route() {
    return pathPrefix(
        "v1",
        () ->
            concat(
                path("runners", () -> get(() -> authorized(this::runners))),
                pathPrefix(
                    "tasks",
                    () ->
                        concat(
                            pathEndOrSingleSlash(
                                () ->
                                    concat(
                                        get(
                                            () ->
                                                parameterOptional(
                                                    "state",
                                                    state ->
                                                        parameterOptional(
                                                            "capsule",
                                                            capsule ->
                                                                authorized(
                                                                    () -> list(state, capsule))))),
                                        post(
                                            () ->
                                                entity(
                                                    Unmarshaller.entityToString(),
                                                    body -> authorized(() -> submit(body)))))),
                            pathPrefix(
                                org.apache.pekko.http.javadsl.server.PathMatchers.segment(),
                                id ->
                                    concat(
                                        pathEndOrSingleSlash(
                                            () ->
                                                concat(
                                                    get(() -> authorized(() -> show(id))),
                                                    delete(
                                                        () -> authorized(true, () -> forget(id))))),
                                        path(
                                            "cancel",
                                            () -> post(() -> authorized(() -> cancel(id))))))))));
  }

  private Route authorized(Supplier<Route> inner) {
    return authorized(false, inner);
  }

  /** {@code deletes}: the route forgets state, which only an admin token may. */
  private Route authorized(boolean deletes, Supplier<Route> inner) {
    return authorized(tokens, projectId, deletes, inner);
  }

  /** True when the task's events are in a journal ({@code reads}), not only in the book. */
  boolean journaled() {
    return reads.isPresent();
  }

  /**
   * {@code inner} for a bearer token of {@code projectId} with the api scope (or admin, which
   * {@code deletes} requires); else 401 or 403 with the code. Also what every node's edge checks
   * before it streams a task's events.
   */
  static Route authorized(
      ProjectTokens tokens, String projectId, boolean deletes, Supplier<Route> inner) {
    return optionalHeaderValueByName(
        "Authorization",
        header -> {
          Optional<String> token =
              header.filter(h -> h.startsWith("Bearer ")).map(h -> h.substring(7).trim());
          try {
            TokenClaims claims = tokens.verify(token.orElse(""));
            if (!claims.projectId().equals(projectId)) {
              return refusal(
                  StatusCodes.FORBIDDEN,
                  Diagnostic.of(
                      Code.E_API_006,
                      "the token is for project '"
                          + claims.projectId()
                          + "', this hub serves '"
                          + projectId
                          + "'"));
            }
            if (!claims.scope().usesTaskApi()) {
              // A runner token opens only the runner endpoint: a leaked runner credential must
              // not submit or cancel work.
              return refusal(
                  StatusCodes.FORBIDDEN,
                  Diagnostic.of(
                      Code.E_PRO_012,
                      "a '" + claims.scope().claim() + "' token cannot use the task API"));
            }
            if (deletes && !claims.scope().deletes()) {
              return refusal(
                  StatusCodes.FORBIDDEN,
                  Diagnostic.of(
                      Code.E_PRO_012,
                      "a '" + claims.scope().claim() + "' token cannot delete tasks; admin can"));
            }
          } catch (DiagnosticException e) {
            return refusal(StatusCodes.UNAUTHORIZED, e.diagnostic());
          }
          return inner.get();
        });
  }

  private Route runners() {
    ArrayNode out = JSON.createArrayNode();
    roll.listed(hub.runners(projectId)).stream()
        .sorted(Comparator.comparing(r -> r.key().runnerId()))
        .forEach(r -> out.add(runner(r)));
    return json(StatusCodes.OK, out);
  }

  private static ObjectNode runner(RunnerInfo r) {
    ObjectNode n = JSON.createObjectNode();
    n.put("id", r.key().runnerId());
    n.put("connected", r.connected());
    n.put("runner_version", r.runnerVersion());
    r.capabilities().forEach(n.putArray("capabilities")::add);
    r.openTasks().stream().sorted().forEach(n.putArray("open_tasks")::add);
    // What placement sees (the capabilities convention read once, by RunnerView.announced): an
    // empty capsule list means the runner announced none and takes any capsule.
    RunnerView view =
        RunnerView.announced(
            r.key().runnerId(), r.capabilities(), r.openTasks().size(), r.connected());
    view.capsules().stream().sorted().forEach(n.putArray("capsules")::add);
    n.put("slots", view.slots());
    n.put("running", view.running());
    return n;
  }

  private Route submit(String body) {
    TaskRequest req;
    try {
      req = TaskRequest.parse(body, () -> "task-" + UUID.randomUUID().toString().substring(0, 8));
    } catch (DiagnosticException e) {
      return refusal(StatusCodes.BAD_REQUEST, e.diagnostic());
    }
    TaskSpec spec = req.spec();
    if (book.wasForgotten(spec.id())) {
      return refusal(
          StatusCodes.CONFLICT,
          Diagnostic.of(Code.E_API_003, "task " + spec.id() + " was deleted from this hub"));
    }
    Pending pending =
        new Pending(
            spec,
            req.capsule(),
            req.runner(),
            req.role(),
            req.invocation(),
            TaskBook.Task.queued(spec.id(), req.capsule(), spec.json(), "not placed yet"));
    return onSuccess(
        queue.submit(pending),
        answer ->
            answer
                .retryAfter()
                .map(
                    after ->
                        complete(
                            HttpResponse.create()
                                .withStatus(answer.status())
                                .addHeader(RetryAfter.create(after.toSeconds()))
                                .withEntity(
                                    HttpEntities.create(
                                        ContentTypes.APPLICATION_JSON, answer.body().toString()))))
                .orElseGet(() -> json(answer.status(), answer.body())));
  }

  /**
   * Forgets a finished task (admin scope): 204 once the deletion is stored (a hub restarted on the
   * same store does not bring it back); 404 ({@code E-API-002}) when unknown, 409 ({@code
   * E-API-001}) while it runs, 503 ({@code E-HUB-004}) when the store did not keep the deletion.
   */
  private Route forget(String id) {
    return onComplete(
        queue.forget(id),
        outcome -> {
          if (outcome.isFailure()) {
            return refusal(
                StatusCodes.SERVICE_UNAVAILABLE,
                Diagnostic.of(
                    Code.E_HUB_004,
                    "the hub's store did not keep the deletion of task "
                        + id
                        + ": "
                        + outcome.failed().get().getMessage()));
          }
          return switch (outcome.get()) {
            case FORGOTTEN -> complete(StatusCodes.NO_CONTENT);
            case UNKNOWN -> noSuchTask(id);
            case RUNNING ->
                refusal(
                    StatusCodes.CONFLICT,
                    Diagnostic.of(Code.E_API_001, "task " + id + " has no report yet"));
          };
        });
  }

  /**
   * Every task the hub knows (a restarted hub: every task in its journal), by id; {@code ?state=}
   * and {@code ?capsule=} keep only the tasks whose state or capsule is exactly that. {@code
   * ?state=queued} lists in queue order: the order they will be placed in.
   */
  private Route list(Optional<String> state, Optional<String> capsule) {
    ArrayNode out = JSON.createArrayNode();
    book.all().stream()
        .sorted(
            state.filter("queued"::equals).isPresent()
                ? queue.order()
                : Comparator.comparing(t -> t.id))
        .map(TaskBook.Task::summary)
        .filter(n -> state.isEmpty() || state.get().equals(n.get("state").asText()))
        .filter(n -> capsule.isEmpty() || capsule.get().equals(n.get("capsule").asText()))
        .forEach(out::add);
    return json(StatusCodes.OK, out);
  }

  private Route show(String id) {
    return book.get(id).map(t -> json(StatusCodes.OK, t.view())).orElseGet(() -> noSuchTask(id));
  }

  /**
   * Cancels a task wherever it is ({@link TaskQueue#cancel}): 200 with state {@code canceled} when
   * it ended here (queued, or taken back from a dead runner), 202 when its runner was sent the
   * cancel, or when it runs nowhere now and will end canceled once taken back; 409 ({@code
   * E-API-005}) when it had already finished; 404 when unknown; 503 ({@code E-HUB-004}) when the
   * store did not keep the cancel: carried out in this hub, it is owed to the store, and the cancel
   * sent again writes it and is answered as that cancel ({@link QueueRecord#payOwed}).
   */
  private Route cancel(String id) {
    return onComplete(
        queue.cancel(id),
        done -> {
          if (done.isFailure()) {
            return refusal(
                StatusCodes.SERVICE_UNAVAILABLE,
                Diagnostic.of(
                    Code.E_HUB_004,
                    "the hub's store did not keep the cancel of task "
                        + id
                        + ": "
                        + done.failed().get().getMessage()
                        + "; it is canceled in this hub, but a restarted one would not know:"
                        + " send the cancel again"));
          }
          CancelOutcome outcome = done.get();
          ObjectNode n = JSON.createObjectNode().put("id", id);
          return switch (outcome) {
            case UNKNOWN -> noSuchTask(id);
            case ENDED -> json(StatusCodes.OK, n.put("canceled", true).put("state", "canceled"));
            case SENT -> json(StatusCodes.ACCEPTED, n.put("canceled", true));
            case REQUESTED ->
                json(StatusCodes.ACCEPTED, n.put("canceled", true).put("cancel_requested", true));
            case FINISHED ->
                json(
                    StatusCodes.CONFLICT,
                    n.put("canceled", false)
                        .setAll(
                            TaskQueue.Answer.body(
                                Diagnostic.of(
                                    Code.E_API_005, "task " + id + " already finished"))));
          };
        });
  }

  static long parseId(String s) {
    try {
      return Math.max(0, Long.parseLong(s.trim()));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  static Route noSuchTask(String id) {
    return refusal(StatusCodes.NOT_FOUND, Diagnostic.of(Code.E_API_002, "no task " + id));
  }

  /** A refusal with its code: {@code error} (code and message), {@code code}, {@code hint}. */
  static Route refusal(StatusCode status, Diagnostic d) {
    return json(status, TaskQueue.Answer.body(d));
  }

  private static Route json(StatusCode status, JsonNode body) {
    return complete(
        HttpResponse.create()
            .withStatus(status)
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body.toString())));
  }
}
