package io.capsule.realharness;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Server-sent events of the OpenAI Responses API as Codex reads them ({@code POST /v1/responses}
 * with {@code stream: true}): {@code response.created}, output items added / text deltas / done,
 * and {@code response.completed} with usage ({@code input_tokens} including the cached ones, {@code
 * input_tokens_details.cached_tokens}, {@code output_tokens} including reasoning, {@code
 * output_tokens_details.reasoning_tokens}).
 */
final class ResponsesStream {
  private final String id;
  private final List<String> frames = new ArrayList<>();
  private int index;

  private ResponsesStream(String id) {
    this.id = id;
    ObjectNode created = event("response.created");
    created.putObject("response").put("id", id).put("status", "in_progress");
    add(created);
  }

  static ResponsesStream start(String responseId) {
    return new ResponsesStream(responseId);
  }

  /** An assistant message streamed in {@code parts}. */
  ResponsesStream text(String itemId, String... parts) {
    ObjectNode added = event("response.output_item.added").put("output_index", index);
    added
        .putObject("item")
        .put("id", itemId)
        .put("type", "message")
        .put("role", "assistant")
        .put("status", "in_progress")
        .putArray("content");
    add(added);
    StringBuilder all = new StringBuilder();
    for (String part : parts) {
      all.append(part);
      add(
          event("response.output_text.delta")
              .put("item_id", itemId)
              .put("output_index", index)
              .put("content_index", 0)
              .put("delta", part));
    }
    ObjectNode done = event("response.output_item.done").put("output_index", index++);
    ObjectNode item =
        done.putObject("item")
            .put("id", itemId)
            .put("type", "message")
            .put("role", "assistant")
            .put("status", "completed");
    item.putArray("content")
        .addObject()
        .put("type", "output_text")
        .put("text", all.toString())
        .putArray("annotations");
    add(done);
    return this;
  }

  /**
   * A function call of {@code name} in {@code namespace}: Codex 0.169.0 offers an MCP server's
   * tools as a {@code namespace} tool named {@code mcp__<server>} holding one function per tool.
   */
  ResponsesStream functionCall(
      String itemId, String callId, String namespace, String name, String arguments) {
    ObjectNode done = event("response.output_item.done").put("output_index", index++);
    done.putObject("item")
        .put("id", itemId)
        .put("type", "function_call")
        .put("status", "completed")
        .put("call_id", callId)
        .put("namespace", namespace)
        .put("name", name)
        .put("arguments", arguments);
    add(done);
    return this;
  }

  /** Ends with {@code response.completed} and its usage. */
  FakeModelApi.Answer completed(int input, int cached, int output, int reasoning) {
    ObjectNode completed = event("response.completed");
    ObjectNode response = completed.putObject("response").put("id", id).put("status", "completed");
    ObjectNode usage =
        response
            .putObject("usage")
            .put("input_tokens", input)
            .put("output_tokens", output)
            .put("total_tokens", input + output);
    usage.putObject("input_tokens_details").put("cached_tokens", cached);
    usage.putObject("output_tokens_details").put("reasoning_tokens", reasoning);
    add(completed);
    return new FakeModelApi.Answer.Sse(List.copyOf(frames), false);
  }

  /** Leaves the stream open after what was added (a model that stalls mid-answer). */
  FakeModelApi.Answer stall() {
    return new FakeModelApi.Answer.Sse(List.copyOf(frames), true);
  }

  /** An error answer in the API's shape. */
  static FakeModelApi.Answer error(int status, String type, String code, String message) {
    ObjectNode body = MessageStream.JSON.createObjectNode();
    body.putObject("error").put("message", message).put("type", type).put("code", code);
    return new FakeModelApi.Answer.Json(status, body);
  }

  private static ObjectNode event(String type) {
    return MessageStream.JSON.createObjectNode().put("type", type);
  }

  private void add(ObjectNode event) {
    frames.add("event: " + event.path("type").asText() + "\ndata: " + event + "\n\n");
  }
}
