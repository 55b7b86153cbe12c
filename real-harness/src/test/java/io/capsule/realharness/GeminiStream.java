package io.capsule.realharness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Server-sent events of the Gemini API as Gemini CLI reads them ({@code POST
 * /v1beta/models/<model>:streamGenerateContent?alt=sse}): {@code data:} frames, each a {@code
 * GenerateContentResponse} with {@code candidates[0].content.parts}, the last with {@code
 * finishReason: STOP} and {@code usageMetadata} ({@code promptTokenCount} including {@code
 * cachedContentTokenCount}, {@code candidatesTokenCount}).
 */
final class GeminiStream {
  static final String MODEL_VERSION = "gemini-fake";
  private final List<String> frames = new ArrayList<>();

  /** Code Assist wraps each chunk as {@code {"response": <chunk>, "traceId": …}}. */
  private final boolean codeAssist;

  /** The last chunk, held back: the API puts the finish reason and usage on the final part. */
  private ObjectNode held;

  private GeminiStream(boolean codeAssist) {
    this.codeAssist = codeAssist;
  }

  static GeminiStream start() {
    return new GeminiStream(false);
  }

  /**
   * The same stream as the Code Assist API sends it to a Google sign-in ({@code POST
   * /v1internal:streamGenerateContent?alt=sse} on {@code CODE_ASSIST_ENDPOINT}).
   */
  static GeminiStream startCodeAssist() {
    return new GeminiStream(true);
  }

  /** Text in {@code parts}, one frame each. */
  GeminiStream text(String... parts) {
    for (String part : parts) {
      ObjectNode chunk = chunk();
      chunk
          .withArray("candidates")
          .addObject()
          .put("index", 0)
          .putObject("content")
          .put("role", "model")
          .putArray("parts")
          .addObject()
          .put("text", part);
      add(chunk);
    }
    return this;
  }

  /** A function call (an MCP tool is offered to the model as a function declaration). */
  GeminiStream functionCall(String name, JsonNode args) {
    ObjectNode chunk = chunk();
    ObjectNode call =
        chunk
            .withArray("candidates")
            .addObject()
            .put("index", 0)
            .putObject("content")
            .put("role", "model")
            .putArray("parts")
            .addObject()
            .putObject("functionCall");
    call.put("name", name).set("args", args);
    add(chunk);
    return this;
  }

  /** The final chunk gets {@code finishReason: STOP} and the usage. */
  FakeModelApi.Answer stop(int prompt, int cached, int output) {
    if (held == null) {
      throw new IllegalStateException("nothing to stop after");
    }
    ((ObjectNode) held.withArray("candidates").get(0)).put("finishReason", "STOP");
    ObjectNode usage =
        held.putObject("usageMetadata")
            .put("promptTokenCount", prompt)
            .put("candidatesTokenCount", output)
            .put("totalTokenCount", prompt + output);
    if (cached > 0) {
      usage.put("cachedContentTokenCount", cached);
    }
    add(null);
    return new FakeModelApi.Answer.Sse(List.copyOf(frames), false);
  }

  FakeModelApi.Answer stall() {
    add(null);
    return new FakeModelApi.Answer.Sse(List.copyOf(frames), true);
  }

  /** An error answer in the API's shape ({@code {"error":{"code","message","status"}}}). */
  static FakeModelApi.Answer error(int code, String status, String message) {
    ObjectNode body = MessageStream.JSON.createObjectNode();
    body.putObject("error").put("code", code).put("message", message).put("status", status);
    return new FakeModelApi.Answer.Json(code, body);
  }

  private static ObjectNode chunk() {
    return MessageStream.JSON.createObjectNode().put("modelVersion", MODEL_VERSION);
  }

  private void add(ObjectNode chunk) {
    if (held != null) {
      JsonNode frame =
          codeAssist
              ? MessageStream.JSON
                  .createObjectNode()
                  .put("traceId", "capsule-fake-trace")
                  .set("response", held)
              : held;
      frames.add("data: " + frame + "\r\n\r\n");
    }
    held = chunk;
  }
}
