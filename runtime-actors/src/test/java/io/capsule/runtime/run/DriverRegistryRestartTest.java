package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.driver.DriverRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry is restarted on failure (as the runtime spawns it): runs waiting for a load then are
 * refused with a code instead of hanging, and the in-memory registrations survive.
 */
class DriverRegistryRestartTest {

  private final ActorTestKit kit = ActorTestKit.create();
  private final CountDownLatch release = new CountDownLatch(1);
  @TempDir Path dir;

  @AfterEach
  void stop() {
    release.countDown();
    kit.shutdownTestKit();
  }

  @Test
  void aCrashDuringResolutionRefusesTheWaitingRunsAndKeepsTheRegistrations() throws Exception {
    RunLimits limits = RunLimits.defaults(dir);
    ActorRef<DriverRegistry.Command> registry =
        kit.spawn(
            Behaviors.supervise(
                    DriverRegistry.create(
                        m -> {
                          throw new AssertionError("no folder capsules here");
                        },
                        System.getenv(),
                        Duration.ofSeconds(30),
                        limits.blockingDispatcher()))
                .onFailure(SupervisorStrategy.restart()));
    Path scenario = java.nio.file.Files.writeString(dir.resolve("s.txt"), "!read-task\n");
    Supplier<ProcessDriver> slow =
        () -> {
          try {
            // The first load waits here, on the blocking dispatcher, while the registry fails.
            release.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return new PlayDriver(RunFixture.script(), scenario, InterruptMethod.SIGNAL_INT, false);
        };
    Manifest manifest =
        Manifest.builder("slow", "0.1.0")
            .builtinDriver("claude-code", "0.6.0")
            .systemPrompt("You are a test.")
            .build();
    var registered = kit.<DriverRegistry.Registered>createTestProbe();
    registry.tell(new DriverRegistry.Register("slow", manifest, slow, registered.getRef()));
    CapsuleRef ref = registered.receiveMessage().ref();

    var waiting = kit.<DriverRegistry.Resolution>createTestProbe();
    registry.tell(new DriverRegistry.Resolve(ref, waiting.getRef()));
    waiting.expectNoMessage(Duration.ofMillis(200)); // the load is in flight

    // A message the registry cannot handle (no capsule) makes it throw: it is restarted.
    var poison = kit.<DriverRegistry.Resolution>createTestProbe();
    registry.tell(new DriverRegistry.Resolve(null, poison.getRef()));

    DriverRegistry.Resolution refused = waiting.receiveMessage(Duration.ofSeconds(5));
    assertInstanceOf(DriverRegistry.Refused.class, refused);
    assertEquals("E-RUN-043", ((DriverRegistry.Refused) refused).diagnostic().code().id());

    release.countDown();
    var again = kit.<DriverRegistry.Resolution>createTestProbe();
    registry.tell(new DriverRegistry.Resolve(ref, again.getRef()));
    DriverRegistry.Resolution ready = again.receiveMessage(Duration.ofSeconds(10));
    assertInstanceOf(DriverRegistry.Ready.class, ready, "the registration survived: " + ready);
    waiting.expectNoMessage(Duration.ofMillis(200)); // the old load's late answer goes nowhere
    poison.expectNoMessage(Duration.ZERO);
  }
}
