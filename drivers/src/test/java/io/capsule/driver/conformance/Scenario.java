package io.capsule.driver.conformance;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.DriverTrap;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One fixture driven through the whole contract the way a run would: load (describe), then on a
 * fresh instance launch, parse, classify-exit (three ways) and read-login (two ways). The first
 * failure ends it; the outcome is engine-independent data, so two engines can be compared.
 */
final class Scenario {
  private Scenario() {}

  /** How a fixture ended: every result, or where it failed, with which code and failure kind. */
  record Outcome(List<Object> results, String stage, Code code, String kind) {
    static Outcome ok(List<Object> results) {
      return new Outcome(results, "none", null, "none");
    }

    boolean failed() {
      return code != null;
    }
  }

  static final LaunchRequest REQUEST =
      new LaunchRequest(
          Optional.of("model-x"),
          "be brief",
          Optional.of("{\"k\":1}"),
          Optional.empty(),
          new Session("s-1", SessionMode.NEW),
          Optional.of("1.0.0"),
          "say hi");

  static Outcome run(DriverLoader loader, String fixture, byte[] bytes) {
    LoadedDriver loaded;
    try {
      loaded = loader.loadBytes(fixture, bytes);
    } catch (DriverException e) {
      return failure("load", e);
    }
    List<Object> results = new ArrayList<>();
    results.add(loaded.description());
    String stage = "instantiate";
    try (ProcessDriver d = loaded.newInstance()) {
      stage = "launch";
      results.add(d.launch(REQUEST));
      stage = "parse";
      results.add(d.parse(List.of("hello", "end", "ünïcode ✓", "")));
      results.add(d.parse(List.of()));
      stage = "classify-exit";
      results.add(
          d.classifyExit(new ExitStatus(Optional.of(0), Optional.empty(), "", false, false)));
      results.add(
          d.classifyExit(new ExitStatus(Optional.of(1), Optional.empty(), "boom", false, false)));
      results.add(
          d.classifyExit(new ExitStatus(Optional.empty(), Optional.of(2), "", true, false)));
      stage = "read-login";
      results.add(d.readLogin(new LoginOutput(Optional.of(0), "ok", "")));
      results.add(d.readLogin(new LoginOutput(Optional.empty(), "", "killed")));
      return Outcome.ok(results);
    } catch (DriverException e) {
      return failure(stage, e);
    }
  }

  private static Outcome failure(String stage, DriverException e) {
    String kind = e instanceof DriverTrap ? "trap" : e instanceof AbiViolation ? "abi" : "refusal";
    return new Outcome(List.of(), stage, e.code(), kind);
  }
}
