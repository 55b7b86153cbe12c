package io.capsule.driver.abi;

import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.PathNeed;
import io.capsule.driver.api.QuotaState;
import io.capsule.driver.api.QuotaWindow;
import io.capsule.driver.api.RetryInfo;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionInfo;
import io.capsule.driver.api.SessionMode;
import io.capsule.driver.api.ToolCallInfo;
import io.capsule.driver.api.ToolCallProgress;
import io.capsule.driver.api.ToolCallStart;
import io.capsule.driver.api.ToolResultInfo;
import io.capsule.driver.api.TurnFailure;
import io.capsule.driver.api.Usage;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/** Contract values for tests: one of every event case, with edge values, and full requests. */
public final class ContractSamples {
  private ContractSamples() {}

  /** One event per WIT case, in case order, with edge values (u64 max, empty strings, none). */
  public static List<Event> everyEvent() {
    return List.of(
        new Event.SessionStarted(new SessionInfo("sess-1", "subscription", Optional.of("opus"))),
        new Event.TextDelta("Hel"),
        new Event.Text("Hello, wörld 😀"),
        new Event.ThinkingDelta(""),
        new Event.Thinking("hmm"),
        new Event.ToolCall(new ToolCallInfo("call-1", "echo", "{\"text\":\"ping\"}")),
        new Event.ToolResult(new ToolResultInfo("call-1", "echo: ping", true)),
        new Event.Retry(new RetryInfo(0xffff_ffffL, "overloaded")),
        new Event.UsageReport(
            new Usage(
                Optional.of(12L),
                Optional.empty(),
                Optional.of(0L),
                Optional.empty(),
                Optional.of(-1L))),
        new Event.TurnEnd("done"),
        new Event.TurnFailed(new TurnFailure(FailureKind.HARNESS_ERROR, "boom")),
        new Event.Note("could not read line 3"),
        new Event.ToolCallStarted(new ToolCallStart("call-2", "search")),
        new Event.ToolCallProgressed(new ToolCallProgress("call-2", 4096L)),
        new Event.Quota(
            List.of(
                new QuotaWindow(
                    "five-hour",
                    Optional.of(0.5),
                    Optional.of(1_767_225_600_000L),
                    Optional.of(300L),
                    Optional.of(QuotaState.WARNING)),
                new QuotaWindow(
                    "seven-day",
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty()))),
        new Event.SuggestedPrompt("Echo something else."));
  }

  public static Description description() {
    return new Description(
        "claude-code",
        "claude",
        List.of("--version"),
        List.of("2.0.1", "2.0.2"),
        InterruptMethod.SIGNAL_INT,
        List.of("HOME", "ANTHROPIC_API_KEY"),
        true,
        true,
        new LoginCheck.Command(List.of("auth", "status")),
        new HarnessNeeds(
            List.of(
                new PathNeed("~/.claude", PathAccess.READ_WRITE),
                new PathNeed("/etc/x", PathAccess.READ)),
            List.of("api.anthropic.com")));
  }

  public static LaunchRequest launchRequest() {
    return new LaunchRequest(
        Optional.of("opus"),
        "You are a capsule.",
        Optional.empty(),
        Optional.of(
            new Bridge(
                "capsule", "http://127.0.0.1:4711/mcp", "secret", List.of("echo", "search"))),
        new Session("sess-1", SessionMode.RESUME),
        Optional.of("2.0.1 (Claude Code)"),
        "Say hi.");
  }

  public static LaunchPlan launchPlan() {
    return new LaunchPlan(
        List.of("-p", "--mcp-config", "{files_dir}/mcp.json"),
        List.of(new EnvVar("NO_COLOR", "1")),
        List.of(new DriverFile("mcp.json", "{}")),
        Optional.of("hi\n".getBytes(StandardCharsets.UTF_8)),
        true,
        Optional.of(new byte[] {3}));
  }
}
