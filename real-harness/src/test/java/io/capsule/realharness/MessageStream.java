package io.capsule.realharness;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds one streamed Messages API answer as the streaming protocol orders it: {@code
 * message_start}; per content block a {@code content_block_start}, its deltas and a {@code
 * content_block_stop}; then {@code message_delta} (stop reason and usage) and {@code message_stop}.
 * Block indexes are assigned in call order.
 */
final class MessageStream {
  static final ObjectMapper JSON = new ObjectMapper();

  /** One server-sent event: its {@code event:} name and its {@code data:} object. */
  record SseEvent(String name, ObjectNode data) {
    String wire() {
      return "event: " + name + "\ndata: " + data + "\n\n";
    }
  }

  /** The input side of the usage, as {@code message_start} reports it. */
  record InputUsage(int input, int cacheRead, int cacheCreation) {}

  private final List<SseEvent> events = new ArrayList<>();
  private final InputUsage usage;
  private int nextIndex;

  private MessageStream(String id, String model, InputUsage usage) {
    this.usage = usage;
    ObjectNode message = JSON.createObjectNode();
    message.put("id", id).put("type", "message").put("role", "assistant").put("model", model);
    message.putArray("content");
    message.putNull("stop_reason");
    message.putNull("stop_sequence");
    ObjectNode u = message.putObject("usage");
    u.put("input_tokens", usage.input())
        .put("cache_creation_input_tokens", usage.cacheCreation())
        .put("cache_read_input_tokens", usage.cacheRead())
        .put("output_tokens", 1);
    ObjectNode start = event("message_start");
    start.set("message", message);
  }

  /** A message with this id, answering as {@code model}, with this input usage. */
  static MessageStream start(String id, String model, InputUsage usage) {
    return new MessageStream(id, model, usage);
  }

  /** A text block streamed as these deltas. */
  MessageStream text(String... chunks) {
    int index = blockStart(block("text").put("text", ""));
    for (String chunk : chunks) {
      delta(index, "text_delta").put("text", chunk);
    }
    return blockStop(index);
  }

  /** A thinking block streamed as these deltas, closed by its signature. */
  MessageStream thinking(String signature, String... chunks) {
    int index = blockStart(block("thinking").put("thinking", "").put("signature", ""));
    for (String chunk : chunks) {
      delta(index, "thinking_delta").put("thinking", chunk);
    }
    delta(index, "signature_delta").put("signature", signature);
    return blockStop(index);
  }

  /** A tool_use block whose input arrives as these {@code input_json_delta} fragments. */
  MessageStream toolUse(String id, String name, String... jsonFragments) {
    ObjectNode block = block("tool_use").put("id", id).put("name", name);
    block.putObject("input");
    int index = blockStart(block);
    for (String fragment : jsonFragments) {
      delta(index, "input_json_delta").put("partial_json", fragment);
    }
    return blockStop(index);
  }

  /** Ends the message: {@code message_delta} with the stop reason and usage, then message_stop. */
  Reply end(String stopReason, int outputTokens) {
    ObjectNode delta = event("message_delta");
    delta.putObject("delta").put("stop_reason", stopReason).putNull("stop_sequence");
    delta
        .putObject("usage")
        .put("input_tokens", usage.input())
        .put("cache_creation_input_tokens", usage.cacheCreation())
        .put("cache_read_input_tokens", usage.cacheRead())
        .put("output_tokens", outputTokens);
    event("message_stop");
    return new Reply.Stream(List.copyOf(events), false);
  }

  /** Sends what was built so far, then keeps the stream open (pings only) until it is closed. */
  Reply stall() {
    return new Reply.Stream(List.copyOf(events), true);
  }

  private ObjectNode event(String type) {
    ObjectNode data = JSON.createObjectNode().put("type", type);
    events.add(new SseEvent(type, data));
    return data;
  }

  private static ObjectNode block(String type) {
    return JSON.createObjectNode().put("type", type);
  }

  private int blockStart(ObjectNode block) {
    int index = nextIndex++;
    event("content_block_start").put("index", index).set("content_block", block);
    return index;
  }

  private ObjectNode delta(int index, String type) {
    return event("content_block_delta").put("index", index).putObject("delta").put("type", type);
  }

  private MessageStream blockStop(int index) {
    event("content_block_stop").put("index", index);
    return this;
  }
}
