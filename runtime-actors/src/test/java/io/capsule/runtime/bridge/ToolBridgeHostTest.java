package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ToolBridgeHost} alone under {@link ManualTime}, with a probe as the run: a start that
 * never lands (its executor runs nothing, as a stuck blocking dispatcher) ends at its bound. Before
 * the bound the run waited for the bridge for ever, even after a cancel.
 */
class ToolBridgeHostTest {

  private static final Duration REAL = Duration.ofSeconds(20);

  private final ActorTestKit kit =
      ActorTestKit.create(ManualTime.config().withFallback(ConfigFactory.load()));
  private final ManualTime time = ManualTime.get(kit.system());
  private final ExecutorService pool = Executors.newSingleThreadExecutor();
  @TempDir Path workdir;

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
    pool.shutdownNow();
  }

  private ActorRef<ToolBridgeHost.Command> host(
      java.util.concurrent.Executor blocking, TestProbe<ToolBridgeHost.Report> run) {
    return kit.spawn(
        ToolBridgeHost.create(
            BridgeConfig.defaults(),
            new ToolWorkspace(workdir, Map.of("PATH", "/usr/bin:/bin"), false),
            List.of(),
            blocking,
            run.ref()));
  }

  @Test
  void aStartThatNeverLandsFailsWithETool009AtItsBoundAndTheHostStops() {
    TestProbe<ToolBridgeHost.Report> run = kit.createTestProbe();
    ActorRef<ToolBridgeHost.Command> host = host(task -> {}, run);

    time.timePasses(ToolBridgeHost.START_BOUND.minusMillis(1));
    run.expectNoMessage(Duration.ofMillis(200));
    time.timePasses(Duration.ofMillis(1));
    ToolBridgeHost.Failed failed = run.expectMessageClass(ToolBridgeHost.Failed.class, REAL);
    assertEquals("E-TOOL-009", failed.diagnostic().code().id());
    assertTrue(failed.diagnostic().message().contains("within 30 s"), failed.toString());
    run.expectTerminated(host, REAL);
  }

  @Test
  void aStopDuringAStuckStartEndsTheHostAtTheBoundWithNoFailure() {
    TestProbe<ToolBridgeHost.Report> run = kit.createTestProbe();
    ActorRef<ToolBridgeHost.Command> host = host(task -> {}, run);
    host.tell(ToolBridgeHost.Stop.INSTANCE);

    time.timePasses(ToolBridgeHost.START_BOUND);
    run.expectTerminated(host, REAL);
    run.expectNoMessage(Duration.ZERO); // the run asked for the stop: nothing to report
  }

  @Test
  void aStartThatLandsIsReadyAndItsBoundNeverFires() {
    TestProbe<ToolBridgeHost.Report> run = kit.createTestProbe();
    ActorRef<ToolBridgeHost.Command> host = host(pool, run);

    ToolBridgeHost.Ready ready = run.expectMessageClass(ToolBridgeHost.Ready.class, REAL);
    assertTrue(ready.bridge().url().startsWith("http://127.0.0.1:"), ready.toString());
    time.timePasses(ToolBridgeHost.START_BOUND.multipliedBy(2));
    run.expectNoMessage(Duration.ofMillis(200));

    host.tell(ToolBridgeHost.Stop.INSTANCE);
    run.expectTerminated(host, REAL);
  }
}
