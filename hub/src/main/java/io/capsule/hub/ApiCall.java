package io.capsule.hub;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * One task API request as it crosses from the node that received it to the project's brain: method,
 * path and query, the headers the API reads, and the body (already read, bounded by the server's
 * {@code max-content-length}). The brain answers with a {@link Reply} built from its route's
 * response, so every node answers exactly what the brain's API answers.
 */
record ApiCall(String method, String uri, List<Header> headers, String contentType, String body)
    implements HubCbor {

  /** The request headers the task API reads; every other one stays at the edge. */
  private static final List<String> PASSED = List.of("authorization", "last-event-id", "accept");

  /** How long the brain waits for its own response's body (its answers are small JSON). */
  private static final long STRICT_MILLIS = 10_000;

  record Header(String name, String value) implements HubCbor {}

  /** The brain's response. */
  record Reply(int status, String contentType, String body, List<Header> headers)
      implements HubCbor {

    HttpResponse toResponse() {
      HttpResponse r =
          HttpResponse.create()
              .withStatus(status)
              .withEntity(HttpEntities.create(parseType(contentType), body.getBytes(UTF_8)));
      for (Header h : headers) {
        r = r.addHeader(RawHeader.create(h.name(), h.value()));
      }
      return r;
    }
  }

  /** The request received at the edge, with its body read. */
  static ApiCall of(HttpRequest request, String body) {
    List<Header> headers =
        java.util.stream.StreamSupport.stream(request.getHeaders().spliterator(), false)
            .filter(h -> PASSED.contains(h.lowercaseName()))
            .map(h -> new Header(h.name(), h.value()))
            .toList();
    return new ApiCall(
        request.method().value(),
        request.getUri().toRelative().toString(),
        headers,
        request.entity().getContentType().toString(),
        body);
  }

  /** The request again, on the brain's node. */
  HttpRequest toRequest() {
    HttpRequest r =
        HttpRequest.create(uri)
            .withMethod(
                HttpMethods.lookup(method)
                    .orElseThrow(() -> new IllegalArgumentException("method " + method)))
            .withEntity(HttpEntities.create(parseType(contentType), body.getBytes(UTF_8)));
    for (Header h : headers) {
      r = r.addHeader(RawHeader.create(h.name(), h.value()));
    }
    return r;
  }

  /** The brain's response, read whole, as a reply. */
  static CompletionStage<Reply> answer(
      CompletionStage<HttpResponse> response, ActorSystem<?> system) {
    return response.thenCompose(
        r ->
            r.entity()
                .toStrict(STRICT_MILLIS, system)
                .thenApply(
                    strict ->
                        new Reply(
                            r.status().intValue(),
                            strict.getContentType().toString(),
                            strict.getData().utf8String(),
                            java.util.stream.StreamSupport.stream(
                                    r.getHeaders().spliterator(), false)
                                .map((HttpHeader h) -> new Header(h.name(), h.value()))
                                .toList())));
  }

  /** A failure inside the brain, as the response the API gives for it. */
  static Reply failed(Throwable e) {
    return new Reply(
        StatusCodes.INTERNAL_SERVER_ERROR.intValue(),
        "application/json",
        TaskQueue.Answer.body(
                io.capsule.config.diag.Diagnostic.of(
                    io.capsule.config.diag.Code.E_HUB_007,
                    "the hub failed to answer: " + e.getMessage()))
            .toString(),
        List.of());
  }

  private static ContentType parseType(String text) {
    return Optional.ofNullable(text)
        .filter(t -> !t.isEmpty() && !t.equals("none/none"))
        .map(
            t -> {
              try {
                return ContentTypes.parse(t);
              } catch (RuntimeException e) {
                return ContentTypes.APPLICATION_OCTET_STREAM;
              }
            })
        .orElse(ContentTypes.APPLICATION_OCTET_STREAM);
  }
}
