package io.capsule.driver.load;

import io.capsule.driver.component.ComponentBinary;
import io.capsule.driver.engine.ChicoryBuildTimeMachines;
import io.capsule.driver.engine.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The build step before Chicory's build-time compiler (drivers/pom.xml, phase {@code
 * process-classes}): extracts each built-in component's main core module, with the reader the
 * loader uses, so the compiled bytes are exactly the ones {@link DriverLoader} hands the engine;
 * and writes the index {@link ChicoryBuildTimeMachines#INDEX} that finds their classes by SHA-256.
 */
public final class BuiltinCoreModules {
  private BuiltinCoreModules() {}

  /** The main core module of the built-in {@code name}, as the loader reads and extracts it. */
  public static byte[] coreModule(String name) {
    String resource = DriverLoader.BUILTIN_RESOURCES + name + ".wasm";
    try (InputStream in = BuiltinCoreModules.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no built-in driver on the class path at " + resource);
      }
      return ComponentBinary.read(in.readAllBytes()).coreModule();
    } catch (IOException e) {
      throw new UncheckedIOException(resource, e);
    }
  }

  /**
   * {@code BuiltinCoreModules MODULE_DIR CLASSES_DIR}: writes {@code MODULE_DIR/NAME.wasm} for
   * every built-in and the index under {@code CLASSES_DIR}.
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: BuiltinCoreModules MODULE_DIR CLASSES_DIR");
    }
    Path modules = Files.createDirectories(Path.of(args[0]));
    StringBuilder index =
        new StringBuilder(
            "# Written by io.capsule.driver.load.BuiltinCoreModules at build time: the SHA-256 of\n"
                + "# each built-in driver's core module = the Chicory machine compiled from it.\n");
    for (String name : DriverLoader.BUILTINS) {
      byte[] core = coreModule(name);
      Files.write(modules.resolve(name + ".wasm"), core);
      index
          .append("# builtin:")
          .append(name)
          .append('\n')
          .append(Sha256.hex(core))
          .append(" = ")
          .append(ChicoryBuildTimeMachines.machineClassName(name))
          .append('\n');
    }
    Path file = Path.of(args[1]).resolve(ChicoryBuildTimeMachines.INDEX);
    Files.createDirectories(file.getParent());
    Files.writeString(file, index, StandardCharsets.UTF_8);
  }
}
