package io.capsule.driver.component;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a component's core modules are instantiated and wired, read from its sections: what an engine
 * needs to run a component that imports WASI (the preview1 adapter's graph of a main module, the
 * adapter, a shim holding an indirect-call table, and a fixup that fills it).
 *
 * <p>Core instances are listed in the component's order, so every argument refers to an earlier
 * one. Imported component functions reach core code only as {@link Lowered} items ({@code canon
 * lower}) and resource handles only through {@link Dropped} items ({@code canon resource.drop}).
 *
 * @param modules the core modules' bytes, in module index order
 * @param instances the core instances, in index order
 * @param mainInstance the instance whose exports the driver's functions are lifted from
 * @param mainModule the module that instance instantiates
 * @param imports the component's imports (interface names), in order
 */
public record CoreGraph(
    List<byte[]> modules,
    List<Instance> instances,
    int mainInstance,
    int mainModule,
    List<String> imports) {

  public CoreGraph {
    modules = List.copyOf(modules);
    instances = List.copyOf(instances);
    imports = List.copyOf(imports);
  }

  /** One core instance. */
  public sealed interface Instance permits Instantiate, Bundle {}

  /**
   * {@code (instantiate module (with "name" (instance i))…)}.
   *
   * @param args import module name to the core instance that satisfies it
   */
  public record Instantiate(int module, Map<String, Integer> args) implements Instance {
    public Instantiate {
      args = Map.copyOf(args);
    }
  }

  /** An instance made of named items ({@code (core instance (export …)…)}). */
  public record Bundle(Map<String, Item> exports) implements Instance {
    public Bundle {
      exports = Map.copyOf(exports);
    }
  }

  /** A core function, memory, table or global as a bundle holds it. */
  public sealed interface Item permits Export, Lowered, Dropped {}

  /** An export of an earlier core instance. */
  public record Export(int instance, String name) implements Item {}

  /**
   * An imported component function lowered into core code.
   *
   * @param iface the imported interface, e.g. {@code wasi:io/streams@0.2.3}
   * @param function the function's name inside it, e.g. {@code [method]output-stream.write}
   * @param memory the memory the lowering reads and writes, when it names one
   * @param realloc the allocator results are lowered through, when it names one
   */
  public record Lowered(
      String iface, String function, Optional<Export> memory, Optional<Export> realloc)
      implements Item {}

  /** {@code canon resource.drop} of an imported resource type. */
  public record Dropped(String iface, String resource) implements Item {}

  /** Every lowered function and dropped resource, for listing and load checks. */
  public List<Item> hostItems() {
    return instances.stream()
        .filter(Bundle.class::isInstance)
        .flatMap(b -> ((Bundle) b).exports().values().stream())
        .filter(i -> !(i instanceof Export))
        .distinct()
        .toList();
  }
}
