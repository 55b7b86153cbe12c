package io.capsule.runtime.bridge;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * JSON-RPC 2.0 framing for one HTTP body: what arrived, and the envelopes the bridge answers with.
 * Pure; no I/O. Batches (JSON arrays) are refused as invalid requests: MCP 2025-06-18 removed them,
 * and no client this bridge serves sends them.
 */
final class JsonRpc {
  static final int PARSE_ERROR = -32700;
  static final int INVALID_REQUEST = -32600;
  static final int METHOD_NOT_FOUND = -32601;
  static final int INVALID_PARAMS = -32602;
  static final int INTERNAL_ERROR = -32603;

  static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private JsonRpc() {}

  /** One classified HTTP body. */
  sealed interface Incoming {}

  /** A request: it has an id and wants exactly one response. */
  record Call(JsonNode id, String method, JsonNode params) implements Incoming {}

  /** A notification: no id, no response (HTTP 202). */
  record Notification(String method) implements Incoming {}

  /** The client answering a server request; this bridge never sends any, so it is only accepted. */
  record ClientResponse(JsonNode id) implements Incoming {}

  /** Not JSON, or not a JSON-RPC message; answered with {@code code} and HTTP 400. */
  record Malformed(JsonNode id, int code, String message) implements Incoming {}

  static Incoming read(byte[] body) {
    JsonNode root;
    try {
      root = MAPPER.readTree(body);
    } catch (IOException e) {
      return new Malformed(NullNode.instance, PARSE_ERROR, "Parse error: the body is not JSON");
    }
    if (root == null || root.isMissingNode()) {
      return new Malformed(NullNode.instance, PARSE_ERROR, "Parse error: the body is empty");
    }
    if (root.isArray()) {
      return new Malformed(
          NullNode.instance, INVALID_REQUEST, "Invalid Request: batches are not supported");
    }
    if (!root.isObject()) {
      return new Malformed(
          NullNode.instance, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object");
    }
    JsonNode id = root.get("id");
    JsonNode reportedId = validId(id) ? id : NullNode.instance;
    if (!"2.0".equals(root.path("jsonrpc").asText(null))) {
      return new Malformed(reportedId, INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"");
    }
    if (id != null && !validId(id)) {
      return new Malformed(
          NullNode.instance, INVALID_REQUEST, "Invalid Request: id must be a string or a number");
    }
    JsonNode method = root.get("method");
    if (method == null) {
      if (id != null && (root.has("result") || root.has("error"))) {
        return new ClientResponse(id);
      }
      return new Malformed(reportedId, INVALID_REQUEST, "Invalid Request: no method");
    }
    if (!method.isTextual()) {
      return new Malformed(reportedId, INVALID_REQUEST, "Invalid Request: method is not a string");
    }
    JsonNode params = root.get("params");
    if (params != null && !params.isObject() && !params.isArray()) {
      return new Malformed(
          reportedId, INVALID_REQUEST, "Invalid Request: params must be an object or an array");
    }
    if (id == null) {
      return new Notification(method.asText());
    }
    return new Call(id, method.asText(), params == null ? NODES.objectNode() : params);
  }

  /** MCP narrows JSON-RPC ids to strings and numbers (never null). */
  private static boolean validId(JsonNode id) {
    return id != null && (id.isTextual() || id.isIntegralNumber());
  }

  static ObjectNode result(JsonNode id, JsonNode result) {
    ObjectNode out = NODES.objectNode();
    out.put("jsonrpc", "2.0");
    out.set("id", id);
    out.set("result", result);
    return out;
  }

  static ObjectNode error(JsonNode id, int code, String message) {
    ObjectNode out = NODES.objectNode();
    out.put("jsonrpc", "2.0");
    out.set("id", id);
    ObjectNode err = out.putObject("error");
    err.put("code", code);
    err.put("message", message);
    return out;
  }

  static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      // a tree built from JsonNodes always serialises; reaching this is a bug in the bridge
      throw new IllegalStateException("cannot serialise a JSON tree", e);
    }
  }
}
