package io.capsule.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.driver.api.InterruptMethod;
import io.capsule.runtime.harness.HarnessProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Examples: the JVM form of a fake harness ({@code java -cp <testkit> ScriptedHarness x.json}). */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ScriptedHarnessTest {

  @JUnit5TestKit final ActorTestKit kit = ActorTestKit.create();

  @TempDir Path dir;

  private HarnessRunner start(HarnessScript script, byte[] stdin) throws IOException {
    List<String> command = ScriptedHarness.command(script.writeJson(dir.resolve("script.json")));
    return HarnessRunner.start(
        kit, dir, Path.of(command.get(0)), command.subList(1, command.size()), stdin, false);
  }

  @Test
  void replaysLinesFloodsStdinAndTheExitCode() throws IOException {
    HarnessScript script =
        HarnessScript.builder()
            .echoLine("task: ")
            .out("{\"type\":\"text-delta\",\"value\":\"hi\"}")
            .flood("{\"type\":\"note\",\"value\":\"n\"}", 20_000)
            .err("done flooding")
            .out("{\"type\":\"turn-end\",\"value\":\"ok\"}")
            .exit(0)
            .build();
    HarnessRunner run =
        start(script, "write a haiku\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    HarnessProcess.Exited exit = run.finish();
    assertEquals(Optional.of(0), exit.code());
    assertEquals("done flooding\n", exit.stderrTail());
    assertEquals(20_003, run.lines.size());
    assertEquals("task: write a haiku", run.lines.get(0));
    assertEquals("{\"type\":\"turn-end\",\"value\":\"ok\"}", run.lines.get(20_002));
  }

  @Test
  void answersSigintWithItsLineAndCode() throws IOException {
    HarnessScript script =
        HarnessScript.builder()
            .onSigint(HarnessScript.Sigint.exitWith(42, "interrupted"))
            .out("ready")
            .linger(Duration.ofSeconds(60))
            .build();
    HarnessRunner run = start(script, new byte[0]);
    run.readUntil("ready");
    run.harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    HarnessProcess.Exited exit = run.finish();
    assertEquals(Optional.of(42), exit.code());
    assertEquals(List.of("ready", "interrupted"), run.lines);
  }

  @Test
  void obeysSigintByDefault() throws IOException {
    HarnessScript script =
        HarnessScript.builder().out("ready").linger(Duration.ofSeconds(60)).build();
    HarnessRunner run = start(script, new byte[0]);
    run.readUntil("ready");
    run.harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    HarnessProcess.Exited exit = run.finish();
    // The JVM exits 130 on SIGINT, which the runtime reports as signal 2.
    assertEquals(Optional.of(2), exit.signal());
  }

  @Test
  void canIgnoreSigintOnThisJdkUntilKilled() throws IOException {
    HarnessScript script =
        HarnessScript.builder()
            .onSigint(HarnessScript.Sigint.ignore())
            .out("ready")
            .linger(Duration.ofSeconds(60))
            .build();
    HarnessRunner run = start(script, new byte[0]);
    run.readUntil("ready");
    run.harness.tell(new HarnessProcess.Interrupt(InterruptMethod.SIGNAL_INT, Optional.empty()));
    run.probe.expectMessageClass(HarnessProcess.InterruptResult.class, HarnessRunner.WAIT);
    run.probe.expectNoMessage(Duration.ofMillis(500));
    run.harness.tell(new HarnessProcess.Kill("interrupt grace over"));
    HarnessProcess.Exited exit = run.finish();
    assertEquals(Optional.of(9), exit.signal());
  }
}
