package io.capsule.driver.engine;

import io.capsule.driver.wasm.WasmInstance;
import java.util.Map;

/**
 * A core module checked and rewritten for the engines: it imports nothing, its memory is private,
 * 32-bit and capped. Both engines compile {@link #cappedBytes()}, so they enforce the same bound.
 *
 * @param info what the original module declares
 * @param cappedBytes the bytes with the memory maximum lowered to the cap
 * @param sha256 hex SHA-256 of the original bytes
 * @param memoryCapBytes the cap the maximum was lowered to
 */
public record PreparedModule(
    CoreModule info, byte[] cappedBytes, String sha256, long memoryCapBytes) {

  /** The export a reactor module runs once before any other call. */
  public static final String INITIALIZE = "_initialize";

  /**
   * Checks and caps {@code coreModule}: {@code E-RUN-032} when it is not a valid core module,
   * imports anything (naming the first import), or has a memory that cannot be capped.
   */
  public static PreparedModule prepare(byte[] coreModule, long memoryCapBytes) {
    if (memoryCapBytes < CoreModule.PAGE) {
      throw new IllegalArgumentException("a memory cap below one page cannot hold a driver");
    }
    CoreModule info;
    try {
      info = CoreModule.parse(coreModule);
    } catch (ByteReader.Malformed e) {
      throw Failures.unloadable("the driver is not a valid core module: " + e.getMessage(), e);
    }
    if (!info.imports().isEmpty()) {
      CoreModule.Import first = info.imports().get(0);
      throw Failures.unloadable(
          "the driver imports "
              + first.kind()
              + " "
              + first.qualified()
              + "; a driver is granted nothing, so it may import nothing"
              + (info.imports().size() > 1
                  ? " (" + (info.imports().size() - 1) + " more imports follow)"
                  : ""));
    }
    info.memoryProblem(memoryCapBytes)
        .ifPresent(
            why -> {
              throw Failures.unloadable("the driver's memory cannot be capped: " + why);
            });
    return new PreparedModule(
        info, info.withMemoryCap(memoryCapBytes), Sha256.hex(coreModule), memoryCapBytes);
  }

  public Map<String, CoreModule.FuncType> functionExports() {
    return info.functionExports();
  }

  /** The type of an exported function, or {@code E-RUN-034} when there is none. */
  CoreModule.FuncType signature(String export) {
    CoreModule.FuncType type = info.functionExports().get(export);
    if (type == null) {
      throw Failures.noSuchExport(export);
    }
    return type;
  }

  static void checkArity(String export, CoreModule.FuncType type, long[] args) {
    if (args.length != type.params().size()) {
      throw new IllegalArgumentException(
          export + " takes " + type.params().size() + " values, not " + args.length);
    }
  }

  /** Calls {@code _initialize} when exported; used right after instantiation. */
  void initialize(WasmInstance instance) {
    if (info.functionExports().containsKey(INITIALIZE)) {
      instance.call(INITIALIZE);
    }
  }
}
