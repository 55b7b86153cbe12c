package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code launch} of each built-in driver, through the real components on both engines: the
 * arguments, environment, files and stdin each driver's README documents, exactly, and the bridge's
 * bearer token never in argv.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BuiltinDriverLaunchTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String SESSION = "00000000-0000-4000-8000-000000000000";

  /** The built-ins, loaded once per engine for this class and closed after it. */
  @RegisterExtension static final BuiltinDrivers drivers = new BuiltinDrivers();

  Stream<String> engines() {
    return BuiltinDrivers.engines().stream();
  }

  Stream<Arguments> enginesAndDrivers() {
    return engines().flatMap(e -> BuiltinDrivers.NAMES.stream().map(d -> Arguments.of(e, d)));
  }

  private LaunchResult launch(String engine, String driver, LaunchRequest request) {
    try (ProcessDriver d = drivers.instance(engine, driver)) {
      return d.launch(request);
    }
  }

  private LaunchPlan plan(String engine, String driver, LaunchRequest request) {
    return assertInstanceOf(LaunchResult.Planned.class, launch(engine, driver, request)).plan();
  }

  private static LaunchRequest resumed(String id) {
    LaunchRequest g = Golden.launchRequest();
    return new LaunchRequest(
        Optional.of("-model"),
        g.systemPrompt(),
        Optional.empty(),
        Optional.empty(),
        new Session(id, SessionMode.RESUME),
        Optional.of("1.0.0"),
        g.task());
  }

  private static String utf8(Optional<byte[]> bytes) {
    return new String(bytes.orElseThrow(), StandardCharsets.UTF_8);
  }

  private static JsonNode json(String text) throws Exception {
    return MAPPER.readTree(text);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void claudeCodeRunsStreamJsonBothWaysWithTheBridgeInAPrivateConfigFile(String engine)
      throws Exception {
    LaunchPlan plan = plan(engine, "claude-code", Golden.launchRequest());
    assertEquals(
        List.of(
            "--print",
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--include-partial-messages",
            "--setting-sources",
            "",
            "--session-id=" + SESSION,
            "--system-prompt=You are a golden test.",
            "--permission-mode=bypassPermissions",
            "--mcp-config={files_dir}/mcp-config.json",
            "--strict-mcp-config",
            "--tools",
            "mcp__murmur__echo"),
        plan.args());
    assertEquals(
        List.of(
            new EnvVar("IS_SANDBOX", "1"),
            new EnvVar("DISABLE_TELEMETRY", "1"),
            new EnvVar("DISABLE_ERROR_REPORTING", "1"),
            new EnvVar("DISABLE_AUTOUPDATER", "1"),
            new EnvVar("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")),
        plan.envSet());
    assertEquals(1, plan.files().size());
    DriverFile file = plan.files().get(0);
    assertEquals("mcp-config.json", file.name());
    JsonNode server = json(file.contents()).get("mcpServers").get("murmur");
    assertEquals("http", server.get("type").asText());
    assertEquals("http://127.0.0.1:8767/mcp", server.get("url").asText());
    assertEquals("Bearer golden-token", server.get("headers").get("Authorization").asText());
    assertEquals(
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":"
            + "[{\"type\":\"text\",\"text\":\"Say hello.\"}]}}\n",
        utf8(plan.stdin()));
    assertTrue(plan.keepStdinOpen());
    JsonNode interrupt = json(utf8(plan.interruptStdin()));
    assertEquals("control_request", interrupt.get("type").asText());
    assertEquals("interrupt", interrupt.get("request").get("subtype").asText());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void claudeCodeWithoutABridgeGetsNoToolsAndResumesWithEqualsJoinedValues(String engine) {
    LaunchPlan plan = plan(engine, "claude-code", resumed("--evil"));
    int tools = plan.args().indexOf("--tools");
    assertEquals("", plan.args().get(tools + 1));
    assertTrue(plan.args().contains("--resume=--evil"));
    assertTrue(plan.args().contains("--model=-model"));
    assertFalse(plan.args().stream().anyMatch(a -> a.startsWith("--session-id")));
    assertTrue(plan.files().isEmpty());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void codexRunsExecJsonWithTheTaskOnStdinAndTheTokenInItsEnvironment(String engine) {
    LaunchPlan plan = plan(engine, "codex", Golden.launchRequest());
    assertEquals(
        List.of(
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox=workspace-write",
            "--config=analytics.enabled=false",
            "--config=developer_instructions=\"You are a golden test.\"",
            "--config=mcp_servers.murmur.url=\"http://127.0.0.1:8767/mcp\"",
            "--config=mcp_servers.murmur.bearer_token_env_var=\"CAPSULE_BRIDGE_TOKEN\"",
            "--config=mcp_servers.murmur.required=true",
            "--config=mcp_servers.murmur.default_tools_approval_mode=\"approve\"",
            "-"),
        plan.args());
    assertEquals(List.of(new EnvVar("CAPSULE_BRIDGE_TOKEN", Golden.TOKEN)), plan.envSet());
    assertTrue(plan.files().isEmpty());
    assertArrayEquals("Say hello.".getBytes(StandardCharsets.UTF_8), plan.stdin().orElseThrow());
    assertFalse(plan.keepStdinOpen());
    assertTrue(plan.interruptStdin().isEmpty());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void codexResumesItsThreadWithExecResume(String engine) {
    LaunchPlan plan = plan(engine, "codex", resumed("01a2291b"));
    List<String> args = plan.args();
    assertEquals(List.of("resume", "01a2291b", "-"), args.subList(args.size() - 3, args.size()));
    assertTrue(args.contains("--model=-model"));
    assertInstanceOf(LaunchResult.Refused.class, launch(engine, "codex", resumed("--last")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void geminiPromptsHeadlessWithItsSystemPromptAndBridgeInPrivateFiles(String engine)
      throws Exception {
    LaunchPlan plan = plan(engine, "gemini", Golden.launchRequest());
    assertEquals(
        List.of(
            "--prompt=Say hello.",
            "--output-format",
            "stream-json",
            "--skip-trust",
            "--allowed-mcp-server-names=murmur"),
        plan.args());
    assertEquals(
        List.of(
            new EnvVar("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "{files_dir}/settings.json"),
            new EnvVar("GEMINI_SYSTEM_MD", "{files_dir}/system.md"),
            new EnvVar("GEMINI_TELEMETRY_ENABLED", "false")),
        plan.envSet());
    assertEquals(new DriverFile("system.md", "You are a golden test."), plan.files().get(1));
    JsonNode settings = json(plan.files().get(0).contents());
    assertEquals("settings.json", plan.files().get(0).name());
    assertEquals(3, settings.get("general").get("maxAttempts").asInt());
    JsonNode server = settings.get("mcpServers").get("murmur");
    assertEquals("http://127.0.0.1:8767/mcp", server.get("httpUrl").asText());
    assertEquals("Bearer golden-token", server.get("headers").get("Authorization").asText());
    assertFalse(settings.get("telemetry").get("enabled").asBoolean());
    assertTrue(plan.stdin().isEmpty());
    assertFalse(plan.keepStdinOpen());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void jsonlWritesOneTurnLineAndClosesStdin(String engine) throws Exception {
    LaunchPlan plan = plan(engine, "jsonl", Golden.launchRequest());
    assertEquals(List.of(), plan.args());
    assertEquals(List.of(), plan.envSet());
    String stdin = utf8(plan.stdin());
    assertTrue(stdin.endsWith("\n") && stdin.indexOf('\n') == stdin.length() - 1, stdin);
    JsonNode turn = json(stdin);
    assertEquals("turn", turn.get("type").asText());
    assertEquals("Say hello.", turn.get("task").asText());
    assertEquals("You are a golden test.", turn.get("system").asText());
    assertEquals(SESSION, turn.get("session").get("id").asText());
    assertEquals("new", turn.get("session").get("mode").asText());
    assertEquals(Golden.TOKEN, turn.get("bridge").get("token").asText());
    assertFalse(plan.keepStdinOpen());
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("enginesAndDrivers")
  void noDriverPutsTheBearerTokenInArgv(String engine, String driver) {
    LaunchPlan plan = plan(engine, driver, Golden.launchRequest());
    plan.args().forEach(a -> assertFalse(a.contains(Golden.TOKEN), a));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("enginesAndDrivers")
  void anUnknownConfigKeyRefusesTheLaunchNamingTheKey(String engine, String driver) {
    LaunchRequest g = Golden.launchRequest();
    LaunchRequest request =
        new LaunchRequest(
            g.model(),
            g.systemPrompt(),
            Optional.of("{\"no_such_key\":1}"),
            g.bridge(),
            g.session(),
            g.harnessVersion(),
            g.task());
    LaunchResult.Refused refused =
        assertInstanceOf(LaunchResult.Refused.class, launch(engine, driver, request));
    assertTrue(refused.message().contains("no_such_key"), refused.message());
  }
}
