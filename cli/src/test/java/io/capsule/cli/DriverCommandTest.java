package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code capsule driver replay} and {@code describe} against the committed built-in components. */
class DriverCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path RESOURCES = Cli.ROOT.resolve("drivers/src/test/resources");
  private static final Path GOLDEN = RESOURCES.resolve("golden");

  /** Every transcript of the golden index, at two batch sizes. */
  static Stream<Arguments> transcripts() throws IOException {
    List<Arguments> rows = new ArrayList<>();
    for (JsonNode row : JSON.readTree(GOLDEN.resolve("index.json").toFile())) {
      for (int batch : new int[] {1, 256}) {
        rows.add(
            Arguments.of(
                row.get("driver").asText(),
                row.get("transcripts").asText(),
                row.get("name").asText(),
                batch));
      }
    }
    return rows.stream();
  }

  @ParameterizedTest(name = "{0} {2} batch {3}")
  @MethodSource("transcripts")
  void replayPrintsTheGoldenEvents(String driver, String dir, String name, int batch)
      throws IOException {
    Path transcript = RESOURCES.resolve("transcripts").resolve(dir).resolve(name + ".jsonl");
    Cli.Result r =
        Cli.run(
            "driver",
            "replay",
            "builtin:" + driver,
            transcript.toString(),
            "--json",
            "--batch",
            Integer.toString(batch),
            "--launch-request",
            GOLDEN.resolve("launch-request.json").toString());
    List<Event> printed = new ArrayList<>();
    List<Event> classified = new ArrayList<>();
    for (String line : r.out().strip().split("\n")) {
      JsonNode n = JSON.readTree(line);
      boolean marked = ((ObjectNode) n).remove("classified") != null;
      (marked ? classified : printed).add(EventJson.fromJson(n));
    }
    List<Event> golden =
        EventJson.parseArray(
            Files.readString(GOLDEN.resolve(driver).resolve(name + ".events.json")));
    assertEquals(golden, printed);
    Optional<Event> terminal = golden.stream().filter(Event::isTerminal).findFirst();
    // A harness interrupted mid-stream (the interrupt transcripts of Codex and Gemini CLI) prints
    // no terminal event: replay then says what classify-exit makes of it, on one marked line.
    assertEquals(terminal.isEmpty() ? 1 : 0, classified.size(), r.out());
    Event outcome = terminal.orElseGet(() -> classified.get(0));
    boolean done = outcome instanceof Event.TurnEnd;
    assertEquals(done ? ExitCodes.DONE : ExitCodes.TASK_FAILED, r.exit(), r.err());
  }

  @Test
  void replaySaysWhenNoTerminalEventCameAndClassifiesTheExit() throws IOException {
    Path cut = Files.createTempFile("cut", ".jsonl");
    List<String> lines =
        Files.readAllLines(RESOURCES.resolve("transcripts/claude-code/happy.jsonl"));
    Files.write(cut, lines.subList(0, 3));
    Cli.Result r = Cli.run("driver", "replay", "builtin:claude-code", cut.toString());
    assertTrue(r.out().contains("no terminal event: classify-exit with code 0"), r.out());
    Files.delete(cut);
  }

  @Test
  void describePrintsTheBuiltInClaudeCodeDescription() {
    Cli.Result r = Cli.run("driver", "describe", "builtin:claude-code");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("harness         claude-code"), r.out());
    assertTrue(r.out().contains("binary          claude --version"), r.out());
    assertTrue(r.out().contains("interrupt       stdin-message"), r.out());
    assertTrue(r.out().contains("login check     command: auth status --json"), r.out());
  }

  @Test
  void describeListsAWasiDriversImportsWithTheirEmptyGrantAndWhatItPrinted() {
    Path wasi = RESOURCES.resolve("fixtures/wasi/jsonl-wasi.wasm");
    Cli.Result r = Cli.run("driver", "describe", wasi.toString());
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("harness         jsonl"), r.out());
    for (String i :
        List.of(
            "wasi:cli/environment@0.2.12",
            "wasi:cli/exit@0.2.12",
            "wasi:io/streams@0.2.12",
            "wasi:filesystem/preopens@0.2.12",
            "wasi:random/random@0.2.12")) {
      assertTrue(r.out().contains("import          " + i + " (grant: empty)"), r.out());
    }
    assertTrue(
        r.out().contains("describe note   driver stdout: jsonl-wasi: describing myself"), r.out());
    Cli.Result builtin = Cli.run("driver", "describe", "builtin:jsonl");
    assertTrue(builtin.out().contains("imports         none"), builtin.out());
  }

  @Test
  void describeWorksOnBothEngines() {
    Cli.Result wasmtime =
        Cli.run("driver", "describe", "builtin:codex", "--json", "--engine", "wasmtime");
    Cli.Result chicory =
        Cli.run("driver", "describe", "builtin:codex", "--json", "--engine", "chicory");
    assertEquals(0, wasmtime.exit(), wasmtime.err());
    assertEquals(0, chicory.exit(), chicory.err());
    assertEquals(
        wasmtime.out().replace("\"engine\":\"wasmtime\"", ""),
        chicory.out().replace("\"engine\":\"chicory\"", ""));
  }

  @Test
  void aMissingDriverFileIsRefusedWithItsCode() {
    Cli.Result r = Cli.run("driver", "describe", "/no/such/driver.wasm");
    assertEquals(ExitCodes.HARNESS_UNAVAILABLE, r.exit());
    assertTrue(r.err().contains("E-RUN-006"), r.err());
    assertTrue(r.err().contains("hint: "), r.err());
  }
}
