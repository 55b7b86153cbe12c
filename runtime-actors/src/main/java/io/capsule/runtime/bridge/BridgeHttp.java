package io.capsule.runtime.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.StreamLimitReachedException;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * The HTTP face of the bridge: MCP "streamable HTTP" as the Claude Code CLI speaks it, one JSON
 * object per POST response, no server-sent event streams.
 *
 * <p>Order of checks on every request: path {@code /bridge} (404), bearer token (401; compared in
 * constant time), activity (only authenticated requests count: anyone on loopback could knock),
 * {@code Origin} (403 unless absent or loopback: a browser page must not drive the tools), method
 * (405 for anything but POST, which is how clients learn there is no GET stream), {@code
 * Mcp-Session-Id} (404 for an id this bridge never issued), {@code MCP-Protocol-Version} (400 when
 * unsupported), body within the read timeout (408) and the cap (413), JSON-RPC (400 with a parse
 * error or invalid request), then the method.
 */
final class BridgeHttp {

  static final String PATH = "/bridge";

  private final byte[] bearer;
  private final McpProtocol mcp;
  private final CallRunner calls;
  private final BridgeConfig config;
  private final ToolBridge.Listener listener;

  BridgeHttp(
      String token,
      McpProtocol mcp,
      CallRunner calls,
      BridgeConfig config,
      ToolBridge.Listener listener) {
    this.bearer = token.getBytes(StandardCharsets.US_ASCII);
    this.mcp = mcp;
    this.calls = calls;
    this.config = config;
    this.listener = listener;
  }

  /**
   * The handler flow; Pekko HTTP materialises it once per connection, so each connection gets its
   * own {@link CallRunner.Connection} and its end (client hang-up included) kills the calls still
   * running on it.
   */
  Flow<HttpRequest, HttpResponse, ?> flow() {
    return Flow.fromMaterializer(
        (mat, attributes) -> {
          CallRunner.Connection connection = new CallRunner.Connection();
          // Pekko HTTP does not cancel the handler's pending response when the client hangs up
          // (a watcher after mapAsync never fires; ToolBridgeAbandonTest pins this down). It
          // does complete the request stream: watched before mapAsync, that completion while a
          // call runs means the harness is gone. HTTP/1.1 clients (the harnesses' MCP clients)
          // never half-close a connection and then wait for a response, and a request with
          // "Connection: close" does not end the stream early (tested too).
          Flow<HttpRequest, HttpResponse, NotUsed> perConnection =
              Flow.of(HttpRequest.class)
                  .watchTermination(
                      (notUsed, done) -> {
                        done.whenComplete((d, failure) -> connection.close());
                        return notUsed;
                      })
                  .mapAsync(1, request -> handle(request, connection, mat));
          return perConnection;
        });
  }

  private CompletionStage<HttpResponse> handle(
      HttpRequest request, CallRunner.Connection connection, Materializer mat) {
    if (!PATH.equals(request.getUri().path())) {
      return early(request, mat, plain(StatusCodes.NOT_FOUND, "not found"));
    }
    if (!authorised(request)) {
      return early(
          request,
          mat,
          plain(StatusCodes.UNAUTHORIZED, "unauthorized")
              .addHeader(RawHeader.create("WWW-Authenticate", "Bearer")));
    }
    listener.onActivity();
    Optional<String> origin = request.getHeader("Origin").map(h -> h.value());
    if (origin.isPresent() && !loopbackOrigin(origin.get())) {
      return early(request, mat, plain(StatusCodes.FORBIDDEN, "origin not allowed"));
    }
    if (request.method() != HttpMethods.POST) {
      return early(
          request,
          mat,
          plain(StatusCodes.METHOD_NOT_ALLOWED, "only POST")
              .addHeader(RawHeader.create("Allow", "POST")));
    }
    Optional<String> session = request.getHeader("Mcp-Session-Id").map(h -> h.value());
    if (!mcp.knowsSession(session)) {
      return early(
          request,
          mat,
          rpcError(StatusCodes.NOT_FOUND, JsonRpc.INVALID_REQUEST, "unknown session"));
    }
    Optional<String> version = request.getHeader("MCP-Protocol-Version").map(h -> h.value());
    if (!McpProtocol.acceptsVersionHeader(version)) {
      return early(
          request,
          mat,
          rpcError(
              StatusCodes.BAD_REQUEST,
              JsonRpc.INVALID_REQUEST,
              "unsupported MCP-Protocol-Version; supported: " + McpProtocol.SUPPORTED_VERSIONS));
    }
    if (request.entity().getContentLengthOption().orElse(0L) > config.bodyCapBytes()) {
      return early(request, mat, plain(StatusCodes.CONTENT_TOO_LARGE, "request body too large"));
    }
    // The body is read under the bridge's own bounds rather than toStrict's, whose size failure
    // is indistinguishable from a broken stream: over the cap is 413, too slow is 408.
    return request
        .entity()
        .withoutSizeLimit()
        .getDataBytes()
        .limitWeighted(config.bodyCapBytes(), chunk -> (long) chunk.size())
        .completionTimeout(config.requestReadTimeout())
        .runFold(ByteString.emptyByteString(), ByteString::concat, mat)
        .thenCompose(body -> dispatch(body.toArray(), connection))
        .exceptionally(BridgeHttp::bodyFailure);
  }

  private CompletionStage<HttpResponse> dispatch(byte[] body, CallRunner.Connection connection) {
    JsonRpc.Incoming incoming = JsonRpc.read(body);
    if (incoming instanceof JsonRpc.Malformed bad) {
      return done(
          json(StatusCodes.BAD_REQUEST, JsonRpc.error(bad.id(), bad.code(), bad.message())));
    }
    if (!(incoming instanceof JsonRpc.Call call)) {
      // notifications (notifications/initialized, …) and client responses: nothing to answer
      return done(HttpResponse.create().withStatus(StatusCodes.ACCEPTED));
    }
    switch (call.method()) {
      case "initialize" -> {
        McpProtocol.Initialized init = mcp.initialize(call.params());
        return done(
            json(StatusCodes.OK, JsonRpc.result(call.id(), init.result()))
                .addHeader(RawHeader.create("Mcp-Session-Id", init.sessionId())));
      }
      case "ping" -> {
        return done(
            json(StatusCodes.OK, JsonRpc.result(call.id(), JsonNodeFactory.instance.objectNode())));
      }
      case "tools/list" -> {
        return done(json(StatusCodes.OK, JsonRpc.result(call.id(), mcp.listTools())));
      }
      case "tools/call" -> {
        JsonNode name = call.params().get("name");
        if (name == null || !name.isTextual()) {
          return done(
              json(
                  StatusCodes.OK,
                  JsonRpc.error(
                      call.id(), JsonRpc.INVALID_PARAMS, "tools/call needs a string \"name\"")));
        }
        JsonNode arguments = call.params().get("arguments");
        return calls
            .call(call.id().toString(), name.asText(), arguments, connection)
            .thenApply(result -> json(StatusCodes.OK, JsonRpc.result(call.id(), result)));
      }
      default -> {
        // server/discover lands here on purpose: the CLI falls back to initialize on -32601
        return done(
            json(
                StatusCodes.OK,
                JsonRpc.error(
                    call.id(),
                    JsonRpc.METHOD_NOT_FOUND,
                    "Method not found: " + CallGate.shorten(call.method()))));
      }
    }
  }

  /**
   * {@code Authorization: Bearer <token>}; the scheme is case-insensitive (RFC 9110), the token is
   * compared in constant time so its bytes cannot be guessed one by one from response times.
   */
  private boolean authorised(HttpRequest request) {
    Optional<String> header = request.getHeader("Authorization").map(h -> h.value().trim());
    if (header.isEmpty() || header.get().length() < 7) {
      return false;
    }
    String value = header.get();
    return value.regionMatches(true, 0, "Bearer ", 0, 7)
        && MessageDigest.isEqual(
            bearer, value.substring(7).trim().getBytes(StandardCharsets.UTF_8));
  }

  private static boolean loopbackOrigin(String origin) {
    for (String host : List.of("http://127.0.0.1", "http://localhost", "http://[::1]")) {
      if (origin.equals(host) || origin.startsWith(host + ":")) {
        return true;
      }
    }
    return false;
  }

  private static HttpResponse bodyFailure(Throwable failure) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    if (cause instanceof StreamLimitReachedException) {
      return plain(StatusCodes.CONTENT_TOO_LARGE, "request body too large");
    }
    if (cause instanceof TimeoutException) {
      return plain(StatusCodes.REQUEST_TIMEOUT, "request body not received in time");
    }
    return plain(StatusCodes.BAD_REQUEST, "request body unreadable");
  }

  /** Answers without reading the body; the body is discarded so the connection stays usable. */
  private static CompletionStage<HttpResponse> early(
      HttpRequest request, Materializer mat, HttpResponse response) {
    request.discardEntityBytes(mat);
    return done(response);
  }

  private static CompletionStage<HttpResponse> done(HttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }

  private static HttpResponse plain(StatusCode status, String text) {
    return HttpResponse.create().withStatus(status).withEntity(ContentTypes.TEXT_PLAIN_UTF8, text);
  }

  private static HttpResponse json(StatusCode status, JsonNode body) {
    return HttpResponse.create()
        .withStatus(status)
        .withEntity(ContentTypes.APPLICATION_JSON, JsonRpc.bytes(body));
  }

  private static HttpResponse rpcError(StatusCode status, int code, String message) {
    return json(status, JsonRpc.error(NullNode.instance, code, message));
  }
}
