package io.capsule.driver.load;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.Artifact;
import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.Description;
import io.capsule.driver.component.ComponentBinary;
import io.capsule.driver.component.DriverBinary;
import io.capsule.driver.engine.CompiledModuleCache;
import io.capsule.driver.engine.Engines;
import io.capsule.driver.engine.Sha256;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.WasmEngine;
import io.capsule.driver.wasm.WasmModule;
import io.capsule.driver.wasm.WasmProcessDriver;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Loads driver artifacts with every check of docs/run-semantics.md §1, in order, and caches what
 * passed by the artifact's SHA-256 (the description is read once per artifact; the compiled module
 * is shared by every run):
 *
 * <ol>
 *   <li>the bytes exist and have the manifest's {@code sha256} — else {@code E-RUN-006};
 *   <li>they parse and export exactly {@code murmur:driver/process@0.6.0} — else {@code E-RUN-029}
 *       ({@link ComponentBinary});
 *   <li>they import nothing but the WASI 0.2 interfaces a component may import (served with empty
 *       grants, {@code io.capsule.driver.wasi}) — else {@code E-RUN-032} naming the first import;
 *   <li>{@code describe()} returns within the call deadline without trapping and describes a usable
 *       driver ({@link DescriptionChecks}) — else {@code E-RUN-032}.
 * </ol>
 *
 * The per-capsule checks against the manifest are {@link #checkAgainst} ({@link ManifestChecks}).
 *
 * <p>Thread-safe. Owns its engine when made by {@link #create}; {@link #close()} then closes it.
 */
public final class DriverLoader implements AutoCloseable {

  /** Where built-in drivers live on the classpath. */
  public static final String BUILTIN_RESOURCES = "io/capsule/driver/builtin/";

  /** The prefix that names a built-in driver: {@code builtin:jsonl}. */
  public static final String BUILTIN_PREFIX = "builtin:";

  private static final Pattern BUILTIN_NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  /** The drivers shipped under {@link #BUILTIN_RESOURCES}, named in the refusal of any other. */
  public static final List<String> BUILTINS = List.of("claude-code", "codex", "gemini", "jsonl");

  /**
   * Load-time bounds.
   *
   * @param memoryCapBytes linear memory per instance (default 64 MiB)
   * @param callDeadline each driver call, restarted before every call (default 30 s)
   */
  public record Settings(long memoryCapBytes, Duration callDeadline) {
    public static final Settings DEFAULTS = new Settings(64L << 20, Duration.ofSeconds(30));
  }

  private final CompiledModuleCache modules;
  private final Settings settings;
  private final boolean ownsEngine;
  private final Map<String, LoadedDriver> loaded = new ConcurrentHashMap<>();

  /** A loader over an engine the caller owns (and closes). */
  public DriverLoader(WasmEngine engine, Settings settings) {
    this(engine, settings, false);
  }

  private DriverLoader(WasmEngine engine, Settings settings, boolean ownsEngine) {
    this.modules = new CompiledModuleCache(engine);
    this.settings = settings;
    this.ownsEngine = ownsEngine;
  }

  /** A loader with its own engine, chosen by name ({@code wasmtime} or {@code chicory}). */
  public static DriverLoader create(String engineName, Settings settings) {
    return new DriverLoader(Engines.create(engineName), settings, true);
  }

  public String engineName() {
    return modules.engine().name();
  }

  public Settings settings() {
    return settings;
  }

  /** The capsule's driver artifact: a built-in, or a file in the capsule directory. */
  public LoadedDriver load(Manifest manifest) {
    Artifact artifact = manifest.driverArtifact();
    Optional<String> builtin = artifact.builtinName();
    if (builtin.isPresent()) {
      return loadBuiltin(builtin.get(), artifact.sha256());
    }
    Path file = manifest.artifactPath(artifact).orElseThrow();
    return loadFile(file, artifact.sha256());
  }

  /** The per-capsule checks of docs/run-semantics.md §1.4 for a loaded driver. */
  public static DriverGrant checkAgainst(
      LoadedDriver driver,
      Manifest manifest,
      Map<String, String> hostEnv,
      boolean machineTokenCeiling) {
    return ManifestChecks.check(driver.description(), manifest, hostEnv, machineTokenCeiling);
  }

  /** A driver by reference: {@code builtin:NAME}, or a file path. */
  public LoadedDriver load(String reference) {
    return reference.startsWith(BUILTIN_PREFIX)
        ? loadBuiltin(reference.substring(BUILTIN_PREFIX.length()), Optional.empty())
        : loadFile(Path.of(reference), Optional.empty());
  }

  /** A built-in driver, from {@code io/capsule/driver/builtin/NAME.wasm} on the classpath. */
  public LoadedDriver loadBuiltin(String name, Optional<String> expectedSha256) {
    String origin = BUILTIN_PREFIX + name;
    if (!BUILTIN_NAME.matcher(name).matches()) {
      throw noSuchBuiltin(name, origin);
    }
    byte[] bytes;
    try (InputStream in =
        DriverLoader.class
            .getClassLoader()
            .getResourceAsStream(BUILTIN_RESOURCES + name + ".wasm")) {
      if (in == null) {
        throw noSuchBuiltin(name, origin);
      }
      bytes = in.readAllBytes();
    } catch (IOException e) {
      throw new DriverException(
          Diagnostic.of(Code.E_RUN_006, "the built-in driver '" + name + "' cannot be read: " + e)
              .with("driver", origin),
          e);
    }
    return loadBytes(origin, bytes, expectedSha256);
  }

  /** A driver artifact file. */
  public LoadedDriver loadFile(Path file, Optional<String> expectedSha256) {
    String origin = file.toString();
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw missing("the driver artifact " + file + " does not exist", origin);
    } catch (IOException e) {
      throw new DriverException(
          Diagnostic.of(Code.E_RUN_006, "the driver artifact " + file + " cannot be read: " + e)
              .with("driver", origin),
          e);
    }
    return loadBytes(origin, bytes, expectedSha256);
  }

  /** A driver from bytes; {@code origin} names it in diagnostics. */
  public LoadedDriver loadBytes(String origin, byte[] bytes) {
    return loadBytes(origin, bytes, Optional.empty());
  }

  private LoadedDriver loadBytes(String origin, byte[] bytes, Optional<String> expectedSha256) {
    String sha = Sha256.hex(bytes);
    if (expectedSha256.isPresent() && !expectedSha256.get().equalsIgnoreCase(sha)) {
      throw new DriverException(
          Diagnostic.of(
                  Code.E_RUN_006,
                  "the driver artifact's sha256 is " + sha + ", not " + expectedSha256.get())
              .with("driver", origin));
    }
    LoadedDriver cached = loaded.get(sha);
    if (cached != null) {
      return cached;
    }
    LoadedDriver fresh = check(origin, bytes);
    LoadedDriver raced = loaded.putIfAbsent(sha, fresh);
    return raced != null ? raced : fresh;
  }

  private LoadedDriver check(String origin, byte[] bytes) {
    try {
      DriverBinary binary = ComponentBinary.read(bytes);
      Layout.check(binary);
      WasmModule module =
          binary.graph().isPresent()
              ? modules.engine().compileGraph(binary.graph().get(), settings.memoryCapBytes())
              : modules.compile(binary.coreModule(), settings.memoryCapBytes());
      Description description;
      List<String> describeNotes;
      try (WasmProcessDriver probe = newDriver(module)) {
        description = probe.describe();
        describeNotes = probe.drainNotes();
      }
      DescriptionChecks.check(description, origin);
      return new LoadedDriver(
          origin,
          engineName(),
          binary,
          module,
          description,
          settings.callDeadline(),
          describeNotes);
    } catch (DriverException e) {
      throw atLoad(e, origin);
    }
  }

  private WasmProcessDriver newDriver(WasmModule module) {
    return new WasmProcessDriver(module.instantiate(settings.callDeadline()));
  }

  /**
   * A call that failed while loading (a trap, deadline or bad result in {@code _initialize} or
   * {@code describe}) is {@code E-RUN-032}, not the run-time {@code E-RUN-034}; other codes stay.
   */
  private static DriverException atLoad(DriverException e, String origin) {
    Diagnostic d = e.diagnostic();
    if (d.details().containsKey("driver") && d.code() != Code.E_RUN_034) {
      return e;
    }
    Code code = d.code() == Code.E_RUN_034 ? Code.E_RUN_032 : d.code();
    String message =
        d.code() == Code.E_RUN_034
            ? "the driver failed while loading: " + d.message()
            : d.message();
    Diagnostic out = new Diagnostic(code, message, null, d.details());
    if (!out.details().containsKey("driver")) {
      out = out.with("driver", origin);
    }
    return new DriverException(out, e);
  }

  private static DriverException noSuchBuiltin(String name, String origin) {
    return new DriverException(
        Diagnostic.of(
                Code.E_RUN_006,
                "there is no built-in driver '"
                    + name
                    + "'; the built-in drivers are "
                    + String.join(", ", BUILTINS))
            .with("driver", origin)
            .withHint(
                "use builtin:"
                    + String.join(", builtin:", BUILTINS)
                    + ", or a driver file (path: in the manifest)"));
  }

  private static DriverException missing(String message, String origin) {
    return new DriverException(Diagnostic.of(Code.E_RUN_006, message).with("driver", origin));
  }

  @Override
  public void close() {
    loaded.clear();
    if (ownsEngine) {
      modules.engine().close();
    }
  }
}
