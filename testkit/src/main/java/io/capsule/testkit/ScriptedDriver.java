package io.capsule.testkit;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A {@link ProcessDriver} in plain Java for tests: a description, a launch plan (fixed or computed
 * from the request), canned parse rules, an exit classifier and a login reader. It records every
 * call so a test can assert what the runtime asked.
 *
 * <p>The default parse rule reads each line as the canonical event JSON ({@link EventJson}, one
 * object per line, e.g. {@code {"type":"turn-end","value":"done"}}); blank lines and lines that are
 * not JSON objects are skipped, and a JSON object that is not a valid event throws (the runtime
 * treats that as a driver failure, {@code E-RUN-034}).
 *
 * <p>Thread-safe: the runtime calls it from its blocking dispatcher while the test reads the
 * records.
 */
public final class ScriptedDriver implements ProcessDriver {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final Description description;
  private final Function<LaunchRequest, LaunchResult> launch;
  private final Function<String, List<Event>> parseLine;
  private final Function<ExitStatus, Event> classifyExit;
  private final Function<LoginOutput, LoginState> readLogin;

  private final List<LaunchRequest> launches = new CopyOnWriteArrayList<>();
  private final List<List<String>> batches = new CopyOnWriteArrayList<>();
  private final List<ExitStatus> exits = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  private ScriptedDriver(Builder b) {
    this.description =
        new Description(
            b.harness,
            b.binary,
            b.versionArgs,
            b.testedVersions,
            b.interrupt,
            b.requiredEnv,
            true,
            true,
            b.loginCheck,
            HarnessNeeds.NONE);
    this.launch = b.launch;
    this.parseLine = b.parseLine;
    this.classifyExit = b.classifyExit;
    this.readLogin = b.readLogin;
  }

  /** A driver for {@code harness} whose binary is {@code binary} (a path or a bare name). */
  public static Builder builder(String harness, String binary) {
    return new Builder(harness, binary);
  }

  /** The default parse rule: one canonical event JSON object per line (see the class doc). */
  public static List<Event> canonicalJsonLine(String line) {
    String trimmed = line.trim();
    if (!trimmed.startsWith("{")) {
      return List.of();
    }
    JsonNode node;
    try {
      node = MAPPER.readTree(trimmed);
    } catch (IOException e) {
      return List.of();
    }
    return List.of(EventJson.fromJson(node));
  }

  /**
   * The default exit rule: interrupted → {@code turn-failed{canceled}}; exit code 0 → {@code
   * turn-end("")}; otherwise {@code turn-failed{harness-error}} naming the code or signal and the
   * last stderr line.
   */
  public static Event defaultClassifyExit(ExitStatus exit) {
    if (exit.interrupted()) {
      return new Event.TurnFailed(new TurnFailure(FailureKind.CANCELED, "interrupted"));
    }
    if (exit.code().equals(Optional.of(0))) {
      return new Event.TurnEnd("");
    }
    String how = exit.code().map(c -> "exit code " + c).orElse("signal " + exit.signal().orElse(0));
    String last = exit.stderrTail().strip().lines().reduce((a, b) -> b).orElse("");
    return new Event.TurnFailed(
        new TurnFailure(FailureKind.HARNESS_ERROR, how + (last.isEmpty() ? "" : ": " + last)));
  }

  @Override
  public Description describe() {
    return description;
  }

  @Override
  public LaunchResult launch(LaunchRequest request) {
    launches.add(request);
    return launch.apply(request);
  }

  @Override
  public List<Event> parse(List<String> lines) {
    batches.add(List.copyOf(lines));
    List<Event> events = new ArrayList<>();
    for (String line : lines) {
      events.addAll(parseLine.apply(line));
    }
    return events;
  }

  @Override
  public Event classifyExit(ExitStatus exit) {
    exits.add(exit);
    return classifyExit.apply(exit);
  }

  @Override
  public LoginState readLogin(LoginOutput output) {
    return readLogin.apply(output);
  }

  @Override
  public void close() {
    closed = true;
  }

  /** Every launch request, in order. */
  public List<LaunchRequest> launches() {
    return List.copyOf(launches);
  }

  /** Every batch handed to {@link #parse}, in order. */
  public List<List<String>> batches() {
    return List.copyOf(batches);
  }

  /** All parsed lines, in order, whatever the batching. */
  public List<String> parsedLines() {
    return batches.stream().flatMap(List::stream).toList();
  }

  /** Every exit handed to {@link #classifyExit}. */
  public List<ExitStatus> exits() {
    return List.copyOf(exits);
  }

  public boolean isClosed() {
    return closed;
  }

  /** Builds a {@link ScriptedDriver}. */
  public static final class Builder {
    private final String harness;
    private final String binary;
    private List<String> versionArgs = List.of("--version");
    private List<String> testedVersions = List.of();
    private InterruptMethod interrupt = InterruptMethod.SIGNAL_INT;
    private List<String> requiredEnv = List.of();
    private LoginCheck loginCheck = new LoginCheck.Unavailable("a scripted harness has no login");
    private Function<LaunchRequest, LaunchResult> launch =
        r -> new LaunchResult.Planned(plan(List.of()));
    private Function<String, List<Event>> parseLine = ScriptedDriver::canonicalJsonLine;
    private Function<ExitStatus, Event> classifyExit = ScriptedDriver::defaultClassifyExit;
    private Function<LoginOutput, LoginState> readLogin =
        o ->
            o.exitCode().equals(Optional.of(0))
                ? new LoginState.LoggedIn()
                : new LoginState.LoggedOut(o.stdout().lines().findFirst().orElse("not signed in"));

    private Builder(String harness, String binary) {
      this.harness = Objects.requireNonNull(harness, "harness");
      this.binary = Objects.requireNonNull(binary, "binary");
    }

    /** A plan with these args, nothing else: empty env-set, no files, stdin closed at once. */
    public static LaunchPlan plan(List<String> args) {
      return new LaunchPlan(args, List.of(), List.of(), Optional.empty(), false, Optional.empty());
    }

    public Builder versionArgs(List<String> args) {
      this.versionArgs = List.copyOf(args);
      return this;
    }

    public Builder testedVersions(List<String> versions) {
      this.testedVersions = List.copyOf(versions);
      return this;
    }

    public Builder interrupt(InterruptMethod method) {
      this.interrupt = Objects.requireNonNull(method, "method");
      return this;
    }

    public Builder requiredEnv(List<String> names) {
      this.requiredEnv = List.copyOf(names);
      return this;
    }

    public Builder loginCheck(LoginCheck check) {
      this.loginCheck = Objects.requireNonNull(check, "check");
      return this;
    }

    /** Every launch returns this plan. */
    public Builder plan(LaunchPlan plan) {
      Objects.requireNonNull(plan, "plan");
      this.launch = r -> new LaunchResult.Planned(plan);
      return this;
    }

    /** Launch computed from the request (may refuse with {@link LaunchResult.Refused}). */
    public Builder launch(Function<LaunchRequest, LaunchResult> launch) {
      this.launch = Objects.requireNonNull(launch, "launch");
      return this;
    }

    /** Replaces the per-line parse rule (a line may give any number of events). */
    public Builder parseLine(Function<String, List<Event>> rule) {
      this.parseLine = Objects.requireNonNull(rule, "rule");
      return this;
    }

    public Builder classifyExit(Function<ExitStatus, Event> rule) {
      this.classifyExit = Objects.requireNonNull(rule, "rule");
      return this;
    }

    public Builder readLogin(Function<LoginOutput, LoginState> rule) {
      this.readLogin = Objects.requireNonNull(rule, "rule");
      return this;
    }

    public ScriptedDriver build() {
      return new ScriptedDriver(this);
    }
  }
}
