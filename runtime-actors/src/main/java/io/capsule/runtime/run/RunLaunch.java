package io.capsule.runtime.run;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.VersionProber;
import io.capsule.runtime.core.Ending;
import io.capsule.runtime.core.TraceFile;
import io.capsule.runtime.core.TraceRecord;
import io.capsule.runtime.core.TraceWriter;
import io.capsule.runtime.core.TurnLedger;
import io.capsule.runtime.driver.ResolvedCapsule;
import io.capsule.runtime.harness.AppliedLaunch;
import io.capsule.runtime.harness.LaunchPlanApplier;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * What a run computes on its way to a spawned harness (docs/run-semantics.md §3–§5), apart from the
 * actor: the turn ledger with the request's budget ("tightens, never loosens"), the version check,
 * the launch request handed to the driver, the driver's plan applied to files and an environment,
 * and how a refused launch or a plan that cannot be applied ends the run. Pure, except {@link
 * #apply}, whose file work runs on the executor it is given.
 */
final class RunLaunch {

  private RunLaunch() {}

  /** The ledger of a run: the manifest's ceilings, tightened by the request's budget. */
  static TurnLedger ledger(
      String taskId, ResolvedCapsule capsule, RunRequest request, Session session) {
    var inference = capsule.manifest().inference();
    return new TurnLedger(
        taskId,
        tighter(inference.maxTurns(), request.maxTurns()),
        tighter(inference.maxSessionTokens(), request.maxTokens()),
        session.mode() == SessionMode.RESUME);
  }

  /** The smaller of two ceilings; an absent one does not bound. */
  static OptionalLong tighter(OptionalLong manifest, OptionalLong budget) {
    if (manifest.isEmpty()) {
      return budget;
    }
    if (budget.isEmpty()) {
      return manifest;
    }
    return OptionalLong.of(Math.min(manifest.getAsLong(), budget.getAsLong()));
  }

  static boolean tested(ResolvedCapsule capsule, Optional<String> version) {
    return version
        .map(v -> VersionProber.tested(v, capsule.description().testedVersions()))
        .orElse(false);
  }

  /** The {@code W-RUN-002} message for a version that is not tested; empty when it is. */
  static Optional<String> untested(ResolvedCapsule capsule, Optional<String> version) {
    if (tested(capsule, version)) {
      return Optional.empty();
    }
    return Optional.of(
        version
            .map(v -> "harness version '" + v + "' is not a tested version")
            .orElse("harness version unreadable"));
  }

  /**
   * What the driver's {@code launch} is told: the request's model (when not blank) over the
   * manifest's, the listening bridge (when the run offers tools), the planned session.
   */
  static LaunchRequest request(
      ResolvedCapsule capsule,
      RunRequest request,
      Optional<Bridge> bridge,
      Session session,
      Optional<String> harnessVersion) {
    var m = capsule.manifest();
    Optional<String> model =
        request.model().map(String::trim).filter(s -> !s.isEmpty()).or(() -> m.inference().model());
    return new LaunchRequest(
        model,
        m.inference().systemPrompt().orElse(""),
        m.inference().driver().configJson(),
        bridge,
        session,
        harnessVersion,
        request.task());
  }

  /** A launch the driver refused ends the run as the driver's failure. */
  static Ending refused(LaunchResult.Refused refused) {
    return new Ending.DriverFailed(
        Diagnostic.of(Code.E_RUN_034, "failed in launch: " + refused.message())
            .with("function", "launch"));
  }

  /**
   * Applies the plan on {@code blocking}: creates the run directory and writes the plan's files
   * under it, builds the environment from the granted names. Fails with the applier's diagnostic,
   * or with the I/O error.
   */
  static CompletableFuture<AppliedLaunch> apply(
      LaunchPlan plan,
      ResolvedCapsule capsule,
      Path workdir,
      Path runDir,
      Map<String, String> hostEnv,
      Optional<Bridge> bridge,
      Executor blocking) {
    Path binary = capsule.binary();
    List<String> allow = capsule.manifest().capabilities().env().granted();
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            TraceFile.createDir(runDir);
            return LaunchPlanApplier.apply(
                plan, binary, workdir, runDir, allow, hostEnv, grants(capsule, hostEnv, bridge));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        blocking);
  }

  /**
   * The manifest's grants as a contained harness gets them; {@code ~/} is the host's HOME, and the
   * run's tool bridge (on the host's loopback) stays reachable from inside the sandbox.
   */
  static HarnessGrants grants(
      ResolvedCapsule capsule, Map<String, String> hostEnv, Optional<Bridge> bridge) {
    Path home = Path.of(hostEnv.getOrDefault("HOME", System.getProperty("user.home")));
    HarnessGrants grants = HarnessGrants.of(capsule.manifest(), home);
    if (bridge.isPresent()) {
      int port = java.net.URI.create(bridge.get().url()).getPort();
      if (port > 0) {
        grants = grants.withLoopback(port);
      }
    }
    return grants;
  }

  /** How a plan that could not be applied ends the run: the driver's fault or the harness's. */
  static Ending notApplied(Throwable failure) {
    Diagnostic d =
        failure instanceof DiagnosticException de
            ? de.diagnostic()
            : Diagnostic.of(
                Code.E_RUN_007, "could not prepare the harness: " + failure.getMessage());
    return d.code() == Code.E_RUN_034 ? new Ending.DriverFailed(d) : new Ending.HarnessFailed(d);
  }

  /** The {@code harness_start} trace line of an applied plan. */
  static TraceRecord harnessStart(
      ResolvedCapsule capsule,
      Optional<String> harnessVersion,
      Session session,
      LaunchPlan plan,
      AppliedLaunch applied) {
    return TraceWriter.harnessStart(
        capsule.driverName(),
        capsule.description().harness(),
        capsule.binary().toString(),
        harnessVersion,
        tested(capsule, harnessVersion),
        session,
        plan,
        List.copyOf(applied.env().keySet()));
  }
}
