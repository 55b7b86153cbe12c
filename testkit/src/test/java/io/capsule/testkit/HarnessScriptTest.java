package io.capsule.testkit;

import static io.capsule.testkit.HarnessRunner.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.harness.HarnessProcess;
import io.capsule.runtime.harness.ProcessGroup;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Examples: a {@link HarnessScript} written as a {@code /bin/sh} script and run by the runtime's
 * harness actor, as a capsule run would run it.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HarnessScriptTest {

  @JUnit5TestKit final ActorTestKit kit = ActorTestKit.create();

  @TempDir Path dir;

  @Test
  void aShellHarnessPrintsItsLinesAndExitsWithItsCode() throws IOException {
    Path harness =
        HarnessScript.builder()
            .out("{\"type\":\"text\",\"value\":\"it's \\\"quoted\\\" $HOME `x`\"}")
            .err("a warning")
            .sleep(Duration.ofMillis(20))
            .out("{\"type\":\"turn-end\",\"value\":\"done\"}")
            .exit(3)
            .build()
            .writeShellScript(dir.resolve("harness.sh"));
    HarnessRunner run = HarnessRunner.start(kit, dir, harness, List.of(), new byte[0], false);
    HarnessProcess.Exited exit = run.finish();
    assertEquals(
        List.of(
            "{\"type\":\"text\",\"value\":\"it's \\\"quoted\\\" $HOME `x`\"}",
            "{\"type\":\"turn-end\",\"value\":\"done\"}"),
        run.lines);
    assertEquals(Optional.of(3), exit.code());
    assertEquals("a warning\n", exit.stderrTail());
  }

  @Test
  void aShellHarnessCanIgnoreSigintUntilItIsKilled() throws IOException {
    Path harness =
        HarnessScript.builder()
            .onSigint(HarnessScript.Sigint.ignore())
            .out("ready")
            .linger(Duration.ofSeconds(60))
            .build()
            .writeShellScript(dir.resolve("stubborn.sh"));
    HarnessRunner run = HarnessRunner.start(kit, dir, harness, List.of(), new byte[0], false);
    run.readUntil("ready");
    run.harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    assertTrue(
        run.probe.expectMessageClass(HarnessProcess.InterruptResult.class, WAIT).delivered());
    run.probe.expectNoMessage(Duration.ofMillis(300));
    run.harness.tell(new HarnessProcess.Kill("interrupt grace over"));
    HarnessProcess.Exited exit = run.finish();
    assertEquals(Optional.of(9), exit.signal());
    assertTrue(exit.killedByRuntime());
    run.probe.awaitAssert(
        WAIT,
        () -> {
          assertEquals(List.of(), ProcessGroup.liveMembers(run.pgid));
          return null;
        });
  }

  @Test
  void aShellHarnessCanAnswerSigintWithALineAndACode() throws IOException {
    Path harness =
        HarnessScript.builder()
            .onSigint(HarnessScript.Sigint.exitWith(7, "{\"type\":\"note\",\"value\":\"bye\"}"))
            .out("ready")
            .linger(Duration.ofSeconds(60))
            .build()
            .writeShellScript(dir.resolve("polite.sh"));
    HarnessRunner run = HarnessRunner.start(kit, dir, harness, List.of(), new byte[0], false);
    run.readUntil("ready");
    run.harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    HarnessProcess.Exited exit = run.finish();
    assertEquals(Optional.of(7), exit.code());
    assertEquals(List.of("ready", "{\"type\":\"note\",\"value\":\"bye\"}"), run.lines);
  }

  @Test
  void aShellHarnessFloodsWritesBytesAndEchoesStdin() throws IOException {
    Path harness =
        HarnessScript.builder()
            .echoLine("got ")
            .flood("x", 5000)
            .bytes(new byte[] {(byte) 0xff, 'o', 'k', '\n', 0, '\n'})
            .build()
            .writeShellScript(dir.resolve("busy.sh"));
    byte[] stdin = "hello\n".getBytes(StandardCharsets.UTF_8);
    HarnessRunner run = HarnessRunner.start(kit, dir, harness, List.of(), stdin, false);
    HarnessProcess.Exited exit = run.finish();
    assertEquals(Optional.of(0), exit.code());
    assertEquals("got hello", run.lines.get(0));
    assertEquals(5003, run.lines.size());
    assertEquals(List.of("\uFFFDok", "\0"), run.lines.subList(5001, 5003));
  }

  @Test
  void theJsonFormReadsBackAsWritten() {
    HarnessScript script =
        HarnessScript.builder()
            .out("a \"b\"\n")
            .bytes(new byte[] {1, 2})
            .readLine()
            .closeStdout()
            .onSigint(HarnessScript.Sigint.exitWith(5, null))
            .exit(4)
            .build();
    @SuppressWarnings("unchecked")
    Map<String, Object> json = (Map<String, Object>) MiniJson.parse(script.toJson());
    assertEquals(4L, json.get("exit"));
    assertEquals(Map.of("exit", 5L), json.get("on_sigint"));
    assertEquals(
        List.of(
            Map.of("out", "a \"b\"\n"),
            Map.of("bytes_hex", "0102"),
            Map.of("read_line", true),
            Map.of("close_stdout", true)),
        json.get("steps"));
  }

  @Test
  void aShellScriptCannotPrintNul() {
    HarnessScript script = HarnessScript.builder().out("a\0b").build();
    assertThrows(
        IllegalArgumentException.class, () -> script.writeShellScript(dir.resolve("nul.sh")));
  }

  @Test
  void aShellHarnessWithATrapAnswersASigintTheSleepItWasInNeverGot() throws Exception {
    // The race seen at load 26: SIGINT reaches the shell just before it forks its sleep, so the
    // sleep never gets it. Sent here to the shell alone, which is the same for the shell: its trap
    // must still run within a sleep step, not after the whole 60 s linger.
    Path harness =
        HarnessScript.builder()
            .onSigint(HarnessScript.Sigint.exitWith(7, "bye"))
            .out("ready")
            .linger(Duration.ofSeconds(60))
            .build()
            .writeShellScript(dir.resolve("trapped.sh"));
    Process sh = new ProcessBuilder("/bin/sh", harness.toString()).start();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(sh.getInputStream(), StandardCharsets.UTF_8))) {
      assertEquals("ready", out.readLine());
      Process kill = new ProcessBuilder("/bin/kill", "-INT", Long.toString(sh.pid())).start();
      assertEquals(0, kill.waitFor());
      assertTrue(sh.waitFor(20, TimeUnit.SECONDS), "the trap did not run within 20 s");
      assertEquals(7, sh.exitValue());
      assertEquals("bye", out.readLine());
    } finally {
      sh.descendants().forEach(ProcessHandle::destroyForcibly);
      sh.destroyForcibly();
    }
  }
}
