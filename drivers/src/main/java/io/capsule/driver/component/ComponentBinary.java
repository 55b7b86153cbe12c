package io.capsule.driver.component;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.engine.ByteReader.Malformed;
import io.capsule.driver.engine.CoreModule;
import io.capsule.driver.wasi.WasiInterfaces;
import io.capsule.driver.wasm.DriverException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a driver artifact — a component exporting {@code murmur:driver/process@0.6.0}, or a core
 * module following the component-model naming convention for it — into the one core module the host
 * runs and how the five functions are lifted from it ({@link DriverBinary}).
 *
 * <p>Refusals follow docs/run-semantics.md §1 in order: a binary that does not parse, or that
 * exports another version or no such interface, is {@code E-RUN-029} (naming what it exports); then
 * an import the host does not serve is {@code E-RUN-032} (naming the first: a core module's import,
 * or a component import other than the WASI 0.2 interfaces of {@link WasiInterfaces}); then
 * anything else the host does not support (async, string encodings other than utf8, resources of
 * the component's own, several core modules that are not fixups in an import-free component, a lift
 * that is not the naming-convention layout) is {@code E-RUN-032} naming what was found.
 *
 * <p>A component that imports WASI is run as its whole core instance graph ({@link GraphReader},
 * {@link DriverBinary#graph()}): the preview1 adapter, its shim and fixup modules run beside the
 * driver's own module, wired by the engine.
 *
 * <p>A component made by wit-component from a reactor module has a second, tiny "fixup" core module
 * whose start function calls the main module's {@code _initialize}; the host runs only the main
 * module and calls {@code _initialize} itself, so a module that imports only functions named {@code
 * _initialize} and declares no memory and no exports is accepted as such a fixup.
 *
 * <p>Pure and thread-safe.
 */
public final class ComponentBinary {
  private ComponentBinary() {}

  /** The interface every driver exports, exactly. */
  public static final String INTERFACE = "murmur:driver/process@0.6.0";

  /** Its functions, in WIT order. */
  public static final List<String> FUNCTIONS =
      List.of("describe", "launch", "parse", "classify-exit", "read-login");

  private static final String FAMILY = "murmur:driver/process@";

  /** Whether the bytes carry the component preamble (layer 1). */
  public static boolean isComponent(byte[] bytes) {
    return bytes.length >= 8
        && bytes[0] == 0
        && bytes[1] == 'a'
        && bytes[2] == 's'
        && bytes[3] == 'm'
        && bytes[6] == 1
        && bytes[7] == 0;
  }

  /** Reads an artifact; every refusal is a {@link DriverException} with its code. */
  public static DriverBinary read(byte[] bytes) {
    if (isComponent(bytes)) {
      return readComponent(bytes);
    }
    if (CoreModule.looksLikeCoreModule(bytes)) {
      return readCoreModule(bytes);
    }
    throw refuse(Code.E_RUN_029, "the driver is neither a WebAssembly component nor a core module");
  }

  private static DriverBinary readCoreModule(byte[] bytes) {
    CoreModule module;
    try {
      module = CoreModule.parse(bytes);
    } catch (Malformed e) {
      throw refuse(Code.E_RUN_029, "the driver does not parse as a core module: " + e.getMessage());
    }
    Set<String> interfaces = new LinkedHashSet<>();
    for (String name : module.functionExports().keySet()) {
      int hash = name.indexOf('#');
      if (hash > 0 && !name.startsWith("cabi_")) {
        interfaces.add(name.substring(0, hash));
      }
    }
    checkInterface(interfaces);
    for (String fn : FUNCTIONS) {
      if (!module.functionExports().containsKey(INTERFACE + "#" + fn)) {
        throw refuse(Code.E_RUN_029, "the driver exports " + INTERFACE + " without " + fn);
      }
    }
    checkImports(module.imports().stream().map(CoreModule.Import::qualified).toList());
    if (!module.exportsMemory("memory")) {
      throw refuse(Code.E_RUN_032, "the driver exports no memory named 'memory'");
    }
    if (!module.functionExports().containsKey("cabi_realloc")) {
      throw refuse(Code.E_RUN_032, "the driver exports no cabi_realloc to lower arguments into");
    }
    Map<String, DriverBinary.Lift> lifts = new LinkedHashMap<>();
    for (String fn : FUNCTIONS) {
      String export = INTERFACE + "#" + fn;
      String post = "cabi_post_" + export;
      lifts.put(
          fn,
          new DriverBinary.Lift(
              fn,
              export,
              module.functionExports().containsKey(post) ? Optional.of(post) : Optional.empty()));
    }
    return new DriverBinary(
        DriverBinary.Form.CORE_MODULE,
        bytes,
        INTERFACE,
        lifts,
        "memory",
        Optional.of("cabi_realloc"),
        0);
  }

  private static DriverBinary readComponent(byte[] bytes) {
    if (bytes[4] != 0x0d || bytes[5] != 0) {
      throw refuse(
          Code.E_RUN_029,
          "the driver is a component of binary version "
              + (bytes[4] & 0xff)
              + "; this host reads version 13 (component-model as of wit-component 0.2xx)");
    }
    ComponentFacts facts;
    try {
      facts = ComponentFacts.read(bytes);
    } catch (Malformed e) {
      throw refuse(Code.E_RUN_029, "the driver does not parse as a component: " + e.getMessage());
    }
    Set<String> interfaces = new LinkedHashSet<>();
    for (ComponentFacts.Export e : facts.exports) {
      if (e.sort() == ComponentFacts.SORT_INSTANCE) {
        interfaces.add(e.name());
      }
    }
    checkInterface(interfaces);
    checkServedImports(facts.imports);
    facts.unsupported.ifPresent(
        why -> {
          throw refuse(Code.E_RUN_032, "the driver component is not supported: " + why);
        });
    if (facts.imports.isEmpty()) {
      if (facts.lowers) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component is not supported: it lowers functions (canon lower) or drops"
                + " resources without importing any");
      }
      return new LiftResolver(facts).resolve();
    }
    CoreGraph graph = GraphReader.read(bytes);
    HostImportChecks.check(graph, facts.modules.stream().map(ComponentFacts.Module::info).toList());
    return new LiftResolver(facts).resolveLinked(graph);
  }

  /**
   * Component imports: only the WASI 0.2 interfaces the host serves with empty grants ({@link
   * WasiInterfaces}); the first other one is {@code E-RUN-032}.
   */
  private static void checkServedImports(List<String> imports) {
    for (String name : imports) {
      if (WasiInterfaces.served(name).isEmpty()) {
        throw refuse(
            Code.E_RUN_032,
            "the driver imports "
                + name
                + "; this runtime serves only WASI 0.2 (cli, io, clocks, random, filesystem) with"
                + " empty grants, and gives no other grant or host function");
      }
    }
  }

  private static void checkInterface(Set<String> exported) {
    if (exported.contains(INTERFACE)) {
      return;
    }
    List<String> family = exported.stream().filter(n -> n.startsWith(FAMILY)).toList();
    if (!family.isEmpty()) {
      throw refuse(
          Code.E_RUN_029,
          "the driver exports "
              + String.join(", ", family)
              + ", not "
              + INTERFACE
              + " (version "
              + family.get(0).substring(FAMILY.length())
              + " instead of 0.6.0)");
    }
    throw refuse(
        Code.E_RUN_029,
        "the driver exports no "
            + INTERFACE
            + (exported.isEmpty()
                ? " (it exports no interface at all)"
                : " (it exports " + String.join(", ", new TreeSet<>(exported)) + ")"));
  }

  private static void checkImports(List<String> imports) {
    if (!imports.isEmpty()) {
      throw refuse(
          Code.E_RUN_032,
          "the driver imports "
              + imports.get(0)
              + "; a plain core module may import nothing (WASI 0.2 is served to components: wrap"
              + " a wasm32-wasi module with the preview1 reactor adapter)"
              + (imports.size() > 1 ? " (" + (imports.size() - 1) + " more imports follow)" : ""));
    }
  }

  static DriverException refuse(Code code, String message) {
    return new DriverException(Diagnostic.of(code, message));
  }

  /** Maps the component's lifts back to named exports of one main core module. */
  private static final class LiftResolver {
    private final ComponentFacts facts;

    LiftResolver(ComponentFacts facts) {
      this.facts = facts;
    }

    /** A component whose core modules import WASI: the whole graph runs, wired by the engine. */
    DriverBinary resolveLinked(CoreGraph graph) {
      DriverBinary flat = resolve(false);
      if (!java.util.Arrays.equals(flat.coreModule(), graph.modules().get(graph.mainModule()))) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component is not supported: its lifts and its instance graph disagree on"
                + " the main module");
      }
      return flat.withGraph(graph);
    }

    DriverBinary resolve() {
      return resolve(true);
    }

    private DriverBinary resolve(boolean importFree) {
      Map<String, DriverBinary.Lift> lifts = new LinkedHashMap<>();
      Set<Integer> mainModules = new TreeSet<>();
      Set<String> memories = new TreeSet<>();
      Set<String> reallocs = new TreeSet<>();
      for (ComponentFacts.Lift lift : facts.lifts) {
        ComponentFacts.CoreRef func = ref(facts.coreFuncs, lift.coreFunc(), "function");
        mainModules.add(moduleOf(func));
        if (!func.name().startsWith(INTERFACE + "#")) {
          throw refuse(
              Code.E_RUN_032,
              "the driver component lifts core export '"
                  + func.name()
                  + "'; only the naming-convention layout ("
                  + INTERFACE
                  + "#<function>) is supported");
        }
        String fn = func.name().substring(INTERFACE.length() + 1);
        if (lift.memory() >= 0) {
          memories.add(sameInstance(func, ref(facts.coreMemories, lift.memory(), "memory")));
        }
        if (lift.realloc() >= 0) {
          reallocs.add(sameInstance(func, ref(facts.coreFuncs, lift.realloc(), "function")));
        }
        Optional<String> post =
            lift.postReturn() >= 0
                ? Optional.of(
                    sameInstance(func, ref(facts.coreFuncs, lift.postReturn(), "function")))
                : Optional.empty();
        lifts.put(fn, new DriverBinary.Lift(fn, func.name(), post));
      }
      for (String fn : FUNCTIONS) {
        if (!lifts.containsKey(fn)) {
          throw refuse(Code.E_RUN_029, "the driver component lifts no " + fn);
        }
      }
      if (mainModules.size() != 1) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component lifts functions from " + mainModules.size() + " core modules");
      }
      if (memories.size() != 1 || reallocs.size() > 1) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component's lifts use memories "
                + memories
                + " and allocators "
                + reallocs
                + "; one of each is supported");
      }
      int main = mainModules.iterator().next();
      ComponentFacts.Module mainModule = facts.modules.get(main);
      int fixups = facts.modules.size() - 1;
      if (importFree) {
        checkImports(
            mainModule.info().imports().stream().map(CoreModule.Import::qualified).toList());
        fixups = countFixups(main);
      }
      return new DriverBinary(
          DriverBinary.Form.COMPONENT,
          mainModule.bytes(),
          INTERFACE,
          lifts,
          memories.iterator().next(),
          reallocs.stream().findFirst(),
          fixups);
    }

    private int countFixups(int main) {
      List<Integer> others = new ArrayList<>();
      for (ComponentFacts.Module m : facts.modules) {
        if (m.index() == main) {
          continue;
        }
        CoreModule info = m.info();
        boolean fixup =
            info.memories().isEmpty()
                && info.exportNames().isEmpty()
                && info.imports().stream()
                    .allMatch(i -> i.kind().equals("func") && i.name().equals("_initialize"));
        if (!fixup) {
          others.add(m.index());
        }
      }
      if (!others.isEmpty()) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component holds "
                + facts.modules.size()
                + " core modules; besides the main one (#"
                + main
                + ") only a fixup that calls _initialize is supported, but #"
                + others.get(0)
                + " is not one");
      }
      return facts.modules.size() - 1;
    }

    private int moduleOf(ComponentFacts.CoreRef ref) {
      if (ref.instance() < 0 || ref.instance() >= facts.coreInstances.size()) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component lifts a core function that is not a core instance's export");
      }
      int module = facts.coreInstances.get(ref.instance()).module();
      if (module < 0 || module >= facts.modules.size()) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component lifts from a core instance that instantiates no module of its"
                + " own");
      }
      return module;
    }

    private static String sameInstance(ComponentFacts.CoreRef func, ComponentFacts.CoreRef other) {
      if (other.instance() != func.instance()) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component's lift of "
                + func.name()
                + " uses '"
                + other.name()
                + "' from another core instance");
      }
      return other.name();
    }

    private static ComponentFacts.CoreRef ref(
        List<ComponentFacts.CoreRef> space, int index, String what) {
      if (index < 0 || index >= space.size() || space.get(index).instance() < 0) {
        throw refuse(
            Code.E_RUN_032,
            "the driver component's lift uses core " + what + " " + index + ", not a core export");
      }
      return space.get(index);
    }
  }
}
