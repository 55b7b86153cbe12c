package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The manifest's grants held against a hostile scripted harness on every built-in driver, through
 * {@code capsule run} with {@code capsule.harness.containment = required} (real bubblewrap and
 * socat, as CI installs them). Each harness speaks its driver's protocol and, before answering,
 * tries what its capsule does not grant: a loopback listener outside the allowlist (through the
 * proxy and directly), a file of {@code $HOME} outside the grants, writes under a read grant, the
 * working and files directories under {@code read_only}; and leaves a setsid and a double-forked
 * child behind. Its answer is what each attempt got.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ContainedDriversTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What every harness must report: each attempt refused or cleaned as the grants say. */
  private static final String REPORT =
      "proxy-allowed allowed-ok; proxy-denied 403; direct-denied failed; secret hidden;"
          + " read-grant refused; read-write-grant written; workdir refused; files refused";

  /** Each driver's own hosts and path, which its harness-needs make the capsule grant. */
  private static final Map<String, String> NEEDS =
      Map.of(
          "claude-code",
          "hosts: [\"api.anthropic.com:443\"]\npath: ~/.claude",
          "codex",
          "hosts: [\"api.openai.com:443\", \"chatgpt.com:443\"]\npath: ~/.codex",
          "gemini",
          "hosts: [\"generativelanguage.googleapis.com:443\", \"cloudcode-pa.googleapis.com:443\","
              + " \"oauth2.googleapis.com:443\"]\npath: ~/.gemini",
          "jsonl",
          "hosts: []\npath: ");

  @TempDir Path tmp;
  private HttpServer allowed;
  private HttpServer denied;
  private final AtomicInteger deniedHits = new AtomicInteger();
  private Path home;

  @BeforeAll
  void start() throws IOException {
    allowed = serve("allowed-ok", new AtomicInteger());
    denied = serve("denied-reached", deniedHits);
    // Outside /tmp: what is hidden there is hidden by the home's own mount.
    home = Files.createTempDirectory(Path.of("/var/tmp"), "capsule-drivers-home-");
    Files.writeString(home.resolve("secret.txt"), "s3cret");
    Files.createDirectories(home.resolve(".state"));
    Files.writeString(Files.createDirectories(home.resolve(".ro")).resolve("granted.txt"), "ok");
  }

  @AfterAll
  void stop() throws IOException {
    allowed.stop(0);
    denied.stop(0);
    try (Stream<Path> all = Files.walk(home)) {
      for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static HttpServer serve(String body, AtomicInteger hits) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext(
        "/",
        exchange -> {
          hits.incrementAndGet();
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, bytes.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
          }
        });
    server.start();
    return server;
  }

  @ParameterizedTest
  @ValueSource(strings = {"claude-code", "codex", "gemini", "jsonl"})
  void aHostileHarnessIsHeldToItsGrantsOnEveryBuiltInDriver(String driver) throws Exception {
    String marker = "4" + (System.nanoTime() % 100000 + 100000);
    Path capsule = capsule(driver, marker);
    Path runs = Files.createDirectories(tmp.resolve("runs-" + driver));
    Run r = run(capsule, runs, "--json");
    List<JsonNode> events = new ArrayList<>();
    for (String line : r.out().strip().split("\n")) {
      events.add(JSON.readTree(line));
    }
    JsonNode finished = events.get(events.size() - 1);

    assertEquals(0, r.exit(), r::toString);
    assertEquals("done", finished.path("status").asText(), r::toString);
    assertEquals(REPORT, finished.path("result").asText(), r::toString);
    List<JsonNode> warnings =
        events.stream().filter(e -> e.path("event").asText().equals("warning")).toList();
    assertTrue(
        warnings.stream().noneMatch(w -> w.path("code").asText().equals("W-CAP-050")), r::toString);
    String deniedAt = "127.0.0.1:" + denied.getAddress().getPort();
    assertTrue(
        warnings.stream()
            .anyMatch(
                w ->
                    w.path("code").asText().equals("W-CAP-052")
                        && w.path("message").asText().contains(deniedAt)),
        r::toString);
    assertEquals(0, deniedHits.get(), "the denied listener was never reached");
    assertTrue(Files.exists(home.resolve(".state/written-" + driver)));
    assertTrue(Files.notExists(home.resolve(".ro/written")));

    JsonNode refused = traceRecord(runs, "egress_refused");
    assertEquals("127.0.0.1", refused.path("host").asText(), refused::toString);
    assertEquals(denied.getAddress().getPort(), refused.path("port").asInt(), refused::toString);
    List<String> fields = new ArrayList<>();
    refused.fieldNames().forEachRemaining(fields::add);
    assertTrue(
        fields.stream()
            .allMatch(
                f ->
                    List.of("event_type", "timestamp", "host", "port", "refused_so_far")
                        .contains(f)),
        "host and port, nothing of the request: " + refused);
    // The setsid and the double-forked child died with the sandbox.
    assertEquals(List.of(), TestCapsules.harnessesAlive("sleep " + marker));
  }

  /** The live view prints the refusal as a warning line with its code. */
  @Test
  void theLiveViewShowsARefusedConnectionAsAWarningLine() throws Exception {
    Path capsule = capsule("jsonl", "5" + (System.nanoTime() % 100000 + 100000));
    Run r = run(capsule, Files.createDirectories(tmp.resolve("runs-live")));
    assertEquals(0, r.exit(), r::toString);
    String deniedAt = "127.0.0.1:" + denied.getAddress().getPort();
    assertTrue(
        r.out().lines().anyMatch(l -> l.contains("W-CAP-052") && l.contains(deniedAt)),
        r::toString);
  }

  record Run(int exit, String out, String err) {}

  /** {@code capsule run CAPSULE --task hi} in its own JVM, with this test's HOME. */
  private Run run(Path capsule, Path runs, String... extra) throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                CapsuleMain.class.getName(),
                "run",
                capsule.toString(),
                "--task",
                "hi",
                "--trace-dir",
                runs.toString()));
    cmd.addAll(List.of(extra));
    ProcessBuilder b = new ProcessBuilder(cmd);
    b.environment().clear();
    b.environment().put("PATH", "/usr/bin:/bin");
    b.environment().put("HOME", home.toString());
    b.environment().put("CAPSULE_HARNESS_CONTAINMENT", "required");
    Path err = tmp.resolve("stderr-" + System.nanoTime());
    Process p = b.redirectError(err.toFile()).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "capsule run ended");
    return new Run(p.exitValue(), out, Files.readString(err));
  }

  private static JsonNode traceRecord(Path runs, String type) throws IOException {
    List<Path> traces;
    try (Stream<Path> files = Files.walk(runs)) {
      traces = files.filter(f -> f.getFileName().toString().equals("trace.jsonl")).toList();
    }
    assertEquals(1, traces.size(), traces::toString);
    for (String line : Files.readAllLines(traces.get(0))) {
      JsonNode n = JSON.readTree(line);
      if (type.equals(n.path("event_type").asText())) {
        return n;
      }
    }
    throw new AssertionError("no " + type + " in " + Files.readString(traces.get(0)));
  }

  /** A capsule on {@code driver} whose harness is {@link #harness}. */
  private Path capsule(String driver, String marker) throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("capsule-" + driver + "-" + marker));
    String[] needs = NEEDS.get(driver).split("\n");
    String hosts = needs[0].substring("hosts: ".length());
    String allow =
        hosts.equals("[]")
            ? "[\"127.0.0.1:" + allowed.getAddress().getPort() + "\"]"
            : hosts.replace("]", ", \"127.0.0.1:" + allowed.getAddress().getPort() + "\"]");
    String path = needs[1].substring("path: ".length());
    String yaml =
        String.join(
            "\n",
            "name: contained-" + driver,
            "version: 0.1.0",
            "artifacts:",
            "  - name: " + driver,
            "    version: 0.6.0",
            "    runtime: driver",
            "    builtin: " + driver,
            "inference:",
            "  transport: process",
            "  driver:",
            "    artifact: " + driver,
            "  command: ./harness.sh",
            "capabilities:",
            "  env:",
            "    allow: [HOME, PATH]",
            "  network:",
            "    allow: " + allow,
            "  harness:",
            "    paths:",
            "      - { path: ~/.state, access: read-write }",
            "      - { path: ~/.ro, access: read }",
            path.isEmpty() ? "" : "      - { path: " + path + ", access: read-write }",
            "  filesystem:",
            "    read_only: true",
            "lifecycle:",
            "  conversation: stateless",
            "");
    Files.writeString(dir.resolve("murmur.yaml"), yaml);
    Path script = dir.resolve("harness.sh");
    Files.writeString(script, harness(driver, marker));
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    return dir;
  }

  /** The hostile attempts, then the answer in {@code driver}'s own protocol. */
  private String harness(String driver, String marker) {
    int allowedPort = allowed.getAddress().getPort();
    int deniedPort = denied.getAddress().getPort();
    String probe =
        String.join(
            "\n",
            "try() { if (eval \"$2\") >/dev/null 2>&1; then r=\"$r$1 $3; \"; else r=\"$r$1 $4; \"; fi; }",
            "r=\"proxy-allowed $(curl -s --max-time 5 http://127.0.0.1:" + allowedPort + "/); \"",
            "r=\"${r}proxy-denied $(curl -s -o /dev/null -w '%{http_code}' --max-time 5"
                + " http://127.0.0.1:"
                + deniedPort
                + "/); \"",
            "try direct-denied \"curl -s --noproxy '*' --max-time 2 http://127.0.0.1:"
                + deniedPort
                + "/\" reached failed",
            "try secret 'cat \"$HOME/secret.txt\"' read hidden",
            "try read-grant 'touch \"$HOME/.ro/written\"' written refused",
            "try read-write-grant 'touch \"$HOME/.state/written-" + driver + "\"' written refused",
            "try workdir 'touch ./written' written refused",
            "try files 'for d in ./files-*; do touch \"$d/written\" || exit 1; done' written refused",
            "r=${r%; }",
            "setsid sh -c 'sleep " + marker + "' </dev/null >/dev/null 2>&1 &",
            "( sh -c 'sleep " + marker + " </dev/null >/dev/null 2>&1 &' & )",
            "");
    String usage = "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}";
    return switch (driver) {
      case "claude-code" ->
          String.join(
              "\n",
              "#!/bin/sh",
              "[ \"$1\" = --version ] && { echo '2.1.328 (Claude Code)'; exit 0; }",
              "sid=none",
              "for a in \"$@\"; do case \"$a\" in --session-id=*) sid=${a#--session-id=};; esac;"
                  + " done",
              "read -r turn",
              probe,
              "printf '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"%s\"}\\n'"
                  + " \"$sid\"",
              "printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                  + "\"result\":\"%s\",\"session_id\":\"%s\","
                  + usage
                  + "}\\n' \"$r\" \"$sid\"",
              "");
      case "codex" ->
          String.join(
              "\n",
              "#!/bin/sh",
              "[ \"$1\" = --version ] && { echo 'codex-cli 0.169.0'; exit 0; }",
              "cat >/dev/null",
              probe,
              "echo '{\"type\":\"thread.started\",\"thread_id\":\"01a2291b-9688-7161\"}'",
              "echo '{\"type\":\"turn.started\"}'",
              "printf '{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\","
                  + "\"type\":\"agent_message\",\"text\":\"%s\"}}\\n' \"$r\"",
              "echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,"
                  + "\"cached_input_tokens\":0,\"output_tokens\":1,\"reasoning_output_tokens\":0}}'",
              "");
      case "gemini" ->
          String.join(
              "\n",
              "#!/bin/sh",
              "[ \"$1\" = --version ] && { echo '0.61.0'; exit 0; }",
              probe,
              "echo '{\"type\":\"init\",\"session_id\":\"cf7b4500-9fce\",\"model\":\"fake\"}'",
              "printf '{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"%s\","
                  + "\"delta\":true}\\n' \"$r\"",
              "echo '{\"type\":\"result\",\"status\":\"success\",\"stats\":{\"total_tokens\":2,"
                  + "\"input_tokens\":1,\"output_tokens\":1,\"cached\":0,\"input\":1,"
                  + "\"duration_ms\":1,\"tool_calls\":0}}'",
              "");
      default ->
          String.join(
              "\n",
              "#!/bin/sh",
              "[ \"$1\" = --version ] && { echo 1; exit 0; }",
              "read -r turn",
              probe,
              "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$r\"",
              "");
    };
  }
}
