package io.capsule.runtime.run;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.TurnFailure;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Java driver for {@code play.sh}: the harness is {@code /bin/sh play.sh <scenario>}; each stdout
 * line is one canonical event JSON object; the line {@code TRAP} makes {@code parse} throw (a
 * driver trap); a line that is not JSON becomes a note. {@code classify-exit} says canceled when
 * interrupted, turn-end for code 0, harness-error otherwise. Launch requests and closes are
 * recorded for assertions.
 */
final class PlayDriver implements ProcessDriver {

  private static final ObjectMapper JSON = new ObjectMapper();

  static final ConcurrentLinkedQueue<LaunchRequest> LAUNCHES = new ConcurrentLinkedQueue<>();
  static final AtomicInteger CLOSED = new AtomicInteger();

  private final Path script;
  private final Path scenario;
  private final InterruptMethod interrupt;
  private final boolean keepStdinOpen;

  PlayDriver(Path script, Path scenario, InterruptMethod interrupt, boolean keepStdinOpen) {
    this.script = script;
    this.scenario = scenario;
    this.interrupt = interrupt;
    this.keepStdinOpen = keepStdinOpen;
  }

  @Override
  public Description describe() {
    return new Description(
        "play",
        "/bin/sh",
        List.of("-c", "echo play v1.0"),
        List.of("1.0"),
        interrupt,
        List.of(),
        true,
        true,
        new LoginCheck.Unavailable("a fake harness has no login"),
        HarnessNeeds.NONE);
  }

  @Override
  public LaunchResult launch(LaunchRequest request) {
    LAUNCHES.add(request);
    return new LaunchResult.Planned(
        new LaunchPlan(
            List.of(script.toString(), scenario.toString()),
            List.of(),
            List.of(),
            Optional.of((request.task() + "\n").getBytes(StandardCharsets.UTF_8)),
            keepStdinOpen,
            Optional.of("INTERRUPT\n".getBytes(StandardCharsets.UTF_8))));
  }

  @Override
  public List<Event> parse(List<String> lines) {
    List<Event> out = new ArrayList<>();
    for (String line : lines) {
      if (line.equals("TRAP")) {
        throw new IllegalStateException("unreachable executed");
      }
      if (line.isBlank()) {
        continue;
      }
      try {
        out.add(EventJson.fromJson(JSON.readTree(line)));
      } catch (Exception e) {
        out.add(new Event.Note("unparsed line"));
      }
    }
    return out;
  }

  @Override
  public Event classifyExit(ExitStatus exit) {
    if (exit.interrupted()) {
      return new Event.TurnFailed(new TurnFailure(FailureKind.CANCELED, "interrupted"));
    }
    if (exit.code().equals(Optional.of(0))) {
      return new Event.TurnEnd("exited cleanly");
    }
    return new Event.TurnFailed(
        new TurnFailure(FailureKind.HARNESS_ERROR, "exit " + exit.code() + " " + exit.signal()));
  }

  @Override
  public LoginState readLogin(LoginOutput output) {
    return new LoginState.Unknown("no login");
  }

  @Override
  public void close() {
    CLOSED.incrementAndGet();
  }
}
