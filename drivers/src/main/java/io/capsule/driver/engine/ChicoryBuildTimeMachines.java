package io.capsule.driver.engine;

import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The Chicory machines compiled when this jar was built (the built-in drivers' core modules, by
 * {@code chicory-compiler-maven-plugin}; drivers/pom.xml), found by the SHA-256 of the core module
 * they were compiled from. The index {@value #INDEX} is written by the same build step that
 * extracts the core modules ({@code io.capsule.driver.load.BuiltinCoreModules}).
 *
 * <p>The classes carry no memory limits: a machine runs the module's functions and reaches memory
 * through its {@link Instance}, whose memory is made from the module the instance is built from. So
 * the engine builds the instance from the bytes capped at load ({@link PreparedModule}) and any
 * configured cap holds on this path as on the run-time compiler's.
 *
 * <p>Thread-safe: the index is read once; the factories are stateless.
 */
public final class ChicoryBuildTimeMachines {

  /** Classpath resource: {@code sha256 = machine class name}, one per built-in driver. */
  public static final String INDEX = "io/capsule/driver/engine/chicory-build-time.properties";

  /** The package the build-time classes are generated into. */
  public static final String PACKAGE = "io.capsule.driver.builtin.chicory";

  private static final Map<String, String> CLASSES = readIndex();

  private ChicoryBuildTimeMachines() {}

  /**
   * The base name the plugin is given for a built-in ({@code claude-code} → {@code
   * io.capsule.driver.builtin.chicory.ClaudeCode}); its machine class adds {@code Machine}.
   */
  public static String baseName(String builtin) {
    StringBuilder out = new StringBuilder(PACKAGE).append('.');
    for (String part : builtin.split("-")) {
      if (!part.isEmpty()) {
        out.append(part.substring(0, 1).toUpperCase(Locale.ROOT)).append(part.substring(1));
      }
    }
    return out.toString();
  }

  /** The machine class the plugin generates for {@code builtin}. */
  public static String machineClassName(String builtin) {
    return baseName(builtin) + "Machine";
  }

  /** SHA-256 to machine class name, as the index lists them. */
  public static Map<String, String> index() {
    return CLASSES;
  }

  /**
   * The build-time machine factory for the core module whose SHA-256 is {@code sha256}, or empty
   * when none was compiled for it (a folder driver) or its class is missing from the class path (a
   * repackaged jar): the run-time compiler serves those.
   */
  public static Optional<Function<Instance, Machine>> forModule(String sha256) {
    String name = CLASSES.get(sha256);
    return name == null ? Optional.empty() : forClass(name);
  }

  /**
   * The factory of a generated machine class by name, or empty when it is not on the class path.
   */
  static Optional<Function<Instance, Machine>> forClass(String name) {
    MethodHandle constructor;
    try {
      Class<?> type = Class.forName(name, true, ChicoryBuildTimeMachines.class.getClassLoader());
      constructor =
          MethodHandles.publicLookup()
              .findConstructor(type, MethodType.methodType(void.class, Instance.class))
              .asType(MethodType.methodType(Machine.class, Instance.class));
    } catch (ReflectiveOperationException | LinkageError e) {
      return Optional.empty();
    }
    return Optional.of(instance -> newMachine(constructor, instance));
  }

  private static Machine newMachine(MethodHandle constructor, Instance instance) {
    try {
      return (Machine) constructor.invokeExact(instance);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("a build-time machine's constructor threw " + e, e);
    }
  }

  private static Map<String, String> readIndex() {
    Properties p = new Properties();
    try (InputStream in =
        ChicoryBuildTimeMachines.class.getClassLoader().getResourceAsStream(INDEX)) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("the build-time machine index " + INDEX + " is unreadable", e);
    }
    Map<String, String> out = new TreeMap<>();
    p.forEach((k, v) -> out.put(k.toString().trim(), v.toString().trim()));
    return Map.copyOf(out);
  }
}
