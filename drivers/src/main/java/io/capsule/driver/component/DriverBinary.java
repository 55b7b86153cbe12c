package io.capsule.driver.component;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the host runs of a driver artifact: one core module and how the five functions of {@code
 * murmur:driver/process@0.6.0} are lifted from it.
 *
 * @param form whether the artifact was a component or a plain core module
 * @param coreModule the main core module's bytes (the only module the host instantiates)
 * @param interfaceName always {@link ComponentBinary#INTERFACE}
 * @param functions WIT function name ({@code describe}, …) to its lift, in WIT order
 * @param memoryExport the core export the lifts read and write
 * @param reallocExport the core export the host lowers through, when any lift names one
 * @param fixupModules how many fixup modules the component held (they only call {@code
 *     _initialize}, which the host calls itself)
 * @param graph for a component that imports WASI, the whole core instance graph the engine runs
 *     (the main module, the adapter, its shim and fixup); empty for an import-free artifact
 */
public record DriverBinary(
    Form form,
    byte[] coreModule,
    String interfaceName,
    Map<String, Lift> functions,
    String memoryExport,
    Optional<String> reallocExport,
    int fixupModules,
    Optional<CoreGraph> graph) {

  /** An artifact whose core module imports nothing: the host runs that one module. */
  public DriverBinary(
      Form form,
      byte[] coreModule,
      String interfaceName,
      Map<String, Lift> functions,
      String memoryExport,
      Optional<String> reallocExport,
      int fixupModules) {
    this(
        form,
        coreModule,
        interfaceName,
        functions,
        memoryExport,
        reallocExport,
        fixupModules,
        Optional.empty());
  }

  /** The same artifact, run as the whole core graph (it imports WASI). */
  public DriverBinary withGraph(CoreGraph graph) {
    return new DriverBinary(
        form,
        coreModule,
        interfaceName,
        functions,
        memoryExport,
        reallocExport,
        fixupModules,
        Optional.of(graph));
  }

  /** The artifact's container. */
  public enum Form {
    COMPONENT,
    CORE_MODULE
  }

  /**
   * One lifted function.
   *
   * @param function the WIT name, e.g. {@code classify-exit}
   * @param coreExport the core function export, e.g. {@code murmur:driver/process@0.6.0#parse}
   * @param postReturn the core export called after the result is lifted, when there is one
   */
  public record Lift(String function, String coreExport, Optional<String> postReturn) {}

  public DriverBinary {
    functions = Map.copyOf(functions);
  }

  /** The component's imports (WASI interfaces, all served with empty grants), in order. */
  public List<String> imports() {
    return graph.map(CoreGraph::imports).orElse(List.of());
  }

  /** The WIT functions in the order the interface declares them. */
  public List<Lift> liftsInOrder() {
    return ComponentBinary.FUNCTIONS.stream().map(functions::get).toList();
  }
}
