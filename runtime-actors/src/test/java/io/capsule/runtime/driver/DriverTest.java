package io.capsule.runtime.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.RunLimits;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The driver actor: typed replies, an unusable result is a driver failure, close off-thread. */
class DriverTest {

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  /** Returns null from every call, and records the thread that closes it. */
  private static final class NullDriver implements ProcessDriver {
    final CompletableFuture<String> closedOn = new CompletableFuture<>();

    @Override
    public Description describe() {
      throw new UnsupportedOperationException("not asked here");
    }

    @Override
    public LaunchResult launch(LaunchRequest request) {
      return null;
    }

    @Override
    public List<Event> parse(List<String> lines) {
      return lines.isEmpty() ? List.of() : null;
    }

    @Override
    public Event classifyExit(ExitStatus exit) {
      return null;
    }

    @Override
    public LoginState readLogin(LoginOutput output) {
      throw new UnsupportedOperationException("not asked here");
    }

    @Override
    public void close() {
      closedOn.complete(Thread.currentThread().getName());
    }
  }

  @Test
  void aCallAnsweredWithNothingIsADriverFailureNamingTheFunction() throws Exception {
    NullDriver d = new NullDriver();
    ActorRef<Driver.Command> driver =
        kit.spawn(Driver.create(() -> d, Duration.ofSeconds(10), RunLimits.BLOCKING_DISPATCHER));
    TestProbe<Driver.Reply> replies = kit.createTestProbe();

    driver.tell(new Driver.Parse(List.of(), replies.getRef()));
    assertEquals(List.of(), replies.expectMessageClass(Driver.Parsed.class).events());

    driver.tell(new Driver.Parse(List.of("line"), replies.getRef()));
    Driver.Reply r = replies.receiveMessage();
    assertInstanceOf(Driver.Failed.class, r);
    Driver.Failed f = (Driver.Failed) r;
    assertEquals("E-RUN-034", f.diagnostic().code().id());
    assertTrue(
        f.diagnostic().message().contains("parse returned no list"), f.diagnostic().message());

    // It stopped, and its instance was closed on the blocking dispatcher, not the actor's thread.
    replies.expectTerminated(driver);
    String thread = d.closedOn.get(5, TimeUnit.SECONDS);
    assertTrue(thread.contains("blocking-dispatcher"), thread);
  }
}
