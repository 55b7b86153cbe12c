package io.capsule.runtime.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The MCP server side of the bridge, minus transport and tool execution: protocol versions,
 * sessions, {@code initialize}, {@code tools/list}, {@code ping}, and the shape of a {@code
 * tools/call} result. Thread-safe (sessions live in a concurrent set); everything else is
 * immutable.
 */
final class McpProtocol {

  /**
   * The revisions this server speaks, newest first. For a tools-only server without server-sent
   * requests they differ in nothing it uses: one JSON object per POST response, a session id
   * header, the same {@code tools/*} shapes. A client asking for another revision gets the newest
   * (MCP's negotiation rule), and decides itself whether to go on.
   */
  static final List<String> SUPPORTED_VERSIONS =
      List.of("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05");

  static final String SERVER_VERSION = "0.1.0";

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String serverName;
  private final List<ShellTool> tools;
  private final Set<String> sessions = ConcurrentHashMap.newKeySet();

  McpProtocol(String serverName, List<ShellTool> tools) {
    this.serverName = serverName;
    this.tools = List.copyOf(tools);
  }

  /** Whether a request carrying this {@code MCP-Protocol-Version} header may proceed. */
  static boolean acceptsVersionHeader(Optional<String> header) {
    return header.isEmpty() || SUPPORTED_VERSIONS.contains(header.get().trim());
  }

  /**
   * Whether a request carrying this {@code Mcp-Session-Id} may proceed: none (the bearer token
   * already authenticates, and {@code server/discover} precedes {@code initialize}), or one this
   * bridge issued. An unknown id is answered 404 so the client re-initialises.
   */
  boolean knowsSession(Optional<String> header) {
    return header.isEmpty() || sessions.contains(header.get().trim());
  }

  /** The {@code initialize} answer and the fresh session id to send in {@code Mcp-Session-Id}. */
  Initialized initialize(JsonNode params) {
    String asked = params.path("protocolVersion").asText("");
    String version = SUPPORTED_VERSIONS.contains(asked) ? asked : SUPPORTED_VERSIONS.get(0);
    ObjectNode result = NODES.objectNode();
    result.put("protocolVersion", version);
    result.putObject("capabilities").putObject("tools").put("listChanged", false);
    ObjectNode info = result.putObject("serverInfo");
    info.put("name", serverName);
    info.put("version", SERVER_VERSION);
    result.put(
        "instructions",
        "Each tool runs one program of the capsule in the task's working directory, without a"
            + " shell.");
    String session = newSessionId();
    sessions.add(session);
    return new Initialized(result, session);
  }

  record Initialized(ObjectNode result, String sessionId) {}

  ObjectNode listTools() {
    ObjectNode result = NODES.objectNode();
    ArrayNode list = result.putArray("tools");
    for (ShellTool tool : tools) {
      ObjectNode t = list.addObject();
      t.put("name", tool.name());
      t.put("description", tool.description());
      t.set("inputSchema", inputSchema());
    }
    return result;
  }

  /**
   * The one input schema every shell tool has: {@code args} (required, strings) and optional {@code
   * stdin}; nothing else. {@link CallGate} enforces exactly this.
   */
  static ObjectNode inputSchema() {
    ObjectNode schema = NODES.objectNode();
    schema.put("type", "object");
    ObjectNode props = schema.putObject("properties");
    ObjectNode args = props.putObject("args");
    args.put("type", "array");
    args.putObject("items").put("type", "string");
    args.put("description", "The program's arguments, one item per argument; no shell syntax.");
    ObjectNode stdin = props.putObject("stdin");
    stdin.put("type", "string");
    stdin.put("description", "Text written to the program's standard input (default: none).");
    schema.putArray("required").add("args");
    schema.put("additionalProperties", false);
    return schema;
  }

  /** A {@code tools/call} result: text items and {@code isError}. */
  static ObjectNode callResult(List<String> texts, boolean isError) {
    ObjectNode result = NODES.objectNode();
    ArrayNode content = result.putArray("content");
    for (String text : texts) {
      ObjectNode item = content.addObject();
      item.put("type", "text");
      item.put("text", text);
    }
    result.put("isError", isError);
    return result;
  }

  private static String newSessionId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }
}
