package io.capsule.driver.component;

import io.capsule.config.diag.Code;
import io.capsule.driver.engine.ByteReader;
import io.capsule.driver.engine.ByteReader.Malformed;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a component's core instantiation graph ({@link CoreGraph}) from its sections, keeping every
 * index space the graph refers to (core functions, memories, tables, globals, instances, modules;
 * component functions, instances and types). A shape the host does not run — a nested component, a
 * component start function, a resource the component defines itself, a lowering with another string
 * encoding — is {@code E-RUN-032} naming the section it was found in. Pure.
 */
final class GraphReader {

  /** What a component function, instance or type index stands for, as far as the host cares. */
  private record Named(String iface, String name) {}

  private final List<byte[]> modules = new ArrayList<>();
  private final List<CoreGraph.Instance> coreInstances = new ArrayList<>();
  // core index spaces: func, table, memory, global (items); null where not an instance export
  private final List<CoreGraph.Item> coreFuncs = new ArrayList<>();
  private final List<CoreGraph.Item> coreTables = new ArrayList<>();
  private final List<CoreGraph.Item> coreMemories = new ArrayList<>();
  private final List<CoreGraph.Item> coreGlobals = new ArrayList<>();
  // component index spaces; null entries are things the core graph never refers to
  private final List<Named> funcs = new ArrayList<>();
  private final List<String> instances = new ArrayList<>();
  private final List<Named> types = new ArrayList<>();
  private final List<Integer> liftedCoreFuncs = new ArrayList<>();
  private final List<String> importNames = new ArrayList<>();

  private GraphReader() {}

  static CoreGraph read(byte[] bytes) {
    GraphReader r = new GraphReader();
    try {
      r.sections(bytes);
    } catch (Malformed e) {
      throw ComponentBinary.refuse(
          Code.E_RUN_029, "the driver does not parse as a component: " + e.getMessage());
    }
    return r.graph();
  }

  private void sections(byte[] bytes) throws Malformed {
    ByteReader in = new ByteReader(bytes, 8, bytes.length);
    while (!in.atEnd()) {
      int id = in.u8();
      int size = in.u32();
      int start = in.position();
      in.skip(size);
      ByteReader s = new ByteReader(bytes, start, in.position());
      try {
        section(id, s, bytes, start, in.position());
      } catch (Malformed e) {
        throw inSection(id, start, e);
      }
    }
  }

  private static final List<String> SECTIONS =
      List.of(
          "custom",
          "core module",
          "core instance",
          "core type",
          "component",
          "instance",
          "alias",
          "type",
          "canon",
          "start",
          "import",
          "export");

  /** {@code e} with the section it was found in, as every reader of the component reports it. */
  static Malformed inSection(int id, int offset, Malformed e) {
    String name = id >= 0 && id < SECTIONS.size() ? SECTIONS.get(id) : "unknown (id " + id + ")";
    return new Malformed("its " + name + " section at offset " + offset + ": " + e.getMessage());
  }

  private void section(int id, ByteReader s, byte[] bytes, int start, int end) throws Malformed {
    switch (id) {
      case 0 -> {
        // custom sections carry names and producers only
      }
      case 1 -> modules.add(Arrays.copyOfRange(bytes, start, end));
      case 2 -> coreInstances(s);
      case 3 -> {
        // core types are only referred to by nested module types, which the host never reads
      }
      case 4 -> {
        // a nested component (wit-component's type-ascribing shim for the export); one holding
        // code of its own is refused by ComponentFacts before this reader runs
      }
      case 5 -> {
        int n = count(s);
        for (int i = 0; i < n; i++) {
          instances.add(null);
        }
      }
      case 6 -> aliases(s);
      case 7 -> {
        int n = count(s);
        for (int i = 0; i < n; i++) {
          types.add(null);
        }
      }
      case 8 -> canons(s);
      case 9 -> throw unsupported("start", "a component start function");
      case 10 -> imports(s);
      case 11 -> exports(s);
      default -> throw new Malformed("unknown component section id " + id);
    }
  }

  /** A vector's length: each element takes at least a byte, so more than the rest is malformed. */
  private static int count(ByteReader s) throws Malformed {
    int n = s.u32();
    if (n < 0 || n > s.remaining()) {
      throw new Malformed("a vector of " + Integer.toUnsignedString(n) + " does not fit");
    }
    return n;
  }

  private void coreInstances(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int kind = s.u8();
      if (kind == 0x00) {
        int module = s.u32();
        if (module >= modules.size()) {
          throw new Malformed("core instance instantiates module " + module + ", not yet defined");
        }
        Map<String, Integer> args = new LinkedHashMap<>();
        int count = s.u32();
        for (int a = 0; a < count; a++) {
          String name = s.name();
          if (s.u8() != 0x12) {
            throw new Malformed("a core instantiate argument must be an instance");
          }
          int instance = s.u32();
          if (instance >= coreInstances.size()) {
            throw new Malformed("core instantiate argument names instance " + instance);
          }
          args.put(name, instance);
        }
        coreInstances.add(new CoreGraph.Instantiate(module, args));
      } else if (kind == 0x01) {
        Map<String, CoreGraph.Item> exports = new LinkedHashMap<>();
        int count = s.u32();
        for (int e = 0; e < count; e++) {
          String name = s.name();
          int sort = s.u8();
          int index = s.u32();
          CoreGraph.Item item = item(coreSpace(sort, "core instance"), index, name);
          exports.put(name, item);
        }
        coreInstances.add(new CoreGraph.Bundle(exports));
      } else {
        throw new Malformed("unknown core instance kind 0x" + Integer.toHexString(kind));
      }
    }
  }

  private List<CoreGraph.Item> coreSpace(int sort, String section) throws Malformed {
    return switch (sort) {
      case 0x00 -> coreFuncs;
      case 0x01 -> coreTables;
      case 0x02 -> coreMemories;
      case 0x03 -> coreGlobals;
      default -> throw unsupported(section, "a core item of sort 0x" + hex(sort));
    };
  }

  private static CoreGraph.Item item(List<CoreGraph.Item> space, int index, String what)
      throws Malformed {
    if (index < 0 || index >= space.size() || space.get(index) == null) {
      throw new Malformed(
          "'" + what + "' refers to core index " + index + ", which is not defined");
    }
    return space.get(index);
  }

  private void aliases(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int sort = s.u8();
      int coreSort = sort == 0x00 ? s.u8() : -1;
      int target = s.u8();
      switch (target) {
        case 0x00 -> { // export of a component instance
          int instance = s.u32();
          String name = s.name();
          String iface = instance < instances.size() ? instances.get(instance) : null;
          addComponentItem(sort, iface == null ? null : new Named(iface, name));
        }
        case 0x01 -> { // export of a core instance
          int instance = s.u32();
          String name = s.name();
          if (instance >= coreInstances.size()) {
            throw new Malformed("alias of core instance " + instance + ", not yet defined");
          }
          if (sort != 0x00) {
            throw new Malformed("a core export alias must have a core sort");
          }
          coreSpace(coreSort, "alias").add(new CoreGraph.Export(instance, name));
        }
        case 0x02 -> { // outer
          s.u32();
          s.u32();
          if (sort == 0x00) {
            throw unsupported("alias", "an outer alias of a core item");
          }
          addComponentItem(sort, null);
        }
        default -> throw new Malformed("unknown alias target 0x" + hex(target));
      }
    }
  }

  private void addComponentItem(int sort, Named named) throws Malformed {
    switch (sort) {
      case 0x01 -> funcs.add(named);
      case 0x03 -> types.add(named);
      case 0x05 -> instances.add(named == null ? null : named.iface() + "#" + named.name());
      case 0x02, 0x04 -> {
        // values and components are never referred to by the core graph
      }
      default -> throw new Malformed("unknown sort 0x" + hex(sort));
    }
  }

  private void canons(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int kind = s.u8();
      switch (kind) {
        case 0x00 -> {
          if (s.u8() != 0x00) {
            throw new Malformed("canon lift of a non-function");
          }
          int coreFunc = s.u32();
          skipOptions(s, "canon lift");
          s.u32(); // the component function type
          liftedCoreFuncs.add(coreFunc);
          funcs.add(null);
        }
        case 0x01 -> {
          if (s.u8() != 0x00) {
            throw new Malformed("canon lower of a non-function");
          }
          int func = s.u32();
          Named target = func < funcs.size() ? funcs.get(func) : null;
          if (target == null) {
            throw unsupported(
                "canon", "a canon lower of component function " + func + ", not an import's");
          }
          coreFuncs.add(lowered(target, s));
        }
        case 0x03 -> {
          int type = s.u32();
          Named resource = type < types.size() ? types.get(type) : null;
          if (resource == null) {
            throw unsupported(
                "canon", "a resource.drop of type " + type + ", not a resource an import defines");
          }
          coreFuncs.add(new CoreGraph.Dropped(resource.iface(), resource.name()));
        }
        case 0x02 -> throw unsupported("canon", "resource.new: the component defines a resource");
        case 0x04 -> throw unsupported("canon", "resource.rep: the component defines a resource");
        default ->
            throw unsupported(
                "canon", "canonical built-in 0x" + hex(kind) + " (async, threads or later)");
      }
    }
  }

  private CoreGraph.Lowered lowered(Named target, ByteReader s) throws Malformed {
    Optional<CoreGraph.Export> memory = Optional.empty();
    Optional<CoreGraph.Export> realloc = Optional.empty();
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int opt = s.u8();
      switch (opt) {
        case 0x00 -> {
          // utf8
        }
        case 0x03 -> memory = Optional.of(export(coreMemories, s.u32(), "memory"));
        case 0x04 -> realloc = Optional.of(export(coreFuncs, s.u32(), "realloc"));
        default ->
            throw unsupported(
                "canon",
                "the lowering of "
                    + target.iface()
                    + "#"
                    + target.name()
                    + " has canonical option 0x"
                    + hex(opt)
                    + " (only utf8, memory and realloc are supported)");
      }
    }
    return new CoreGraph.Lowered(target.iface(), target.name(), memory, realloc);
  }

  private static CoreGraph.Export export(List<CoreGraph.Item> space, int index, String what)
      throws Malformed {
    if (item(space, index, what) instanceof CoreGraph.Export e) {
      return e;
    }
    throw unsupported("canon", "a lowering's " + what + " is not a core instance's export");
  }

  private static void skipOptions(ByteReader s, String where) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int opt = s.u8();
      switch (opt) {
        case 0x00, 0x01, 0x02, 0x06 -> {}
        case 0x03, 0x04, 0x05, 0x07 -> s.u32();
        default -> throw new Malformed(where + " has unknown canonical option 0x" + hex(opt));
      }
    }
  }

  private void imports(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      String name = externName(s);
      int kind = s.u8();
      switch (kind) {
        case 0x05 -> {
          s.u32();
          instances.add(name);
          importNames.add(name);
        }
        case 0x01 ->
            throw unsupported(
                "import",
                "a function imported directly ("
                    + name
                    + "); only WASI interfaces, imported as instances, are served");
        case 0x03 -> {
          if (s.u8() == 0x00) {
            s.u32();
          }
          types.add(null);
        }
        case 0x00, 0x04 -> throw unsupported("import", "an imported module or component " + name);
        default -> throw unsupported("import", "an imported value " + name);
      }
    }
  }

  private void exports(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      externName(s);
      int sort = s.u8();
      if (sort == 0x00) {
        throw unsupported("export", "an exported core item");
      }
      s.u32();
      if (s.u8() == 0x01) {
        int kind = s.u8();
        switch (kind) {
          case 0x00 -> {
            s.u8();
            s.u32();
          }
          case 0x03 -> {
            if (s.u8() == 0x00) {
              s.u32();
            }
          }
          default -> s.u32();
        }
      }
      addComponentItem(sort, null);
    }
  }

  private static String externName(ByteReader s) throws Malformed {
    int prefix = s.u8();
    if (prefix != 0x00 && prefix != 0x01) {
      throw new Malformed("unknown extern name prefix 0x" + hex(prefix));
    }
    return s.name();
  }

  private CoreGraph graph() {
    int main = -1;
    for (int coreFunc : liftedCoreFuncs) {
      CoreGraph.Item item = coreFunc < coreFuncs.size() ? coreFuncs.get(coreFunc) : null;
      if (!(item instanceof CoreGraph.Export e)
          || !(coreInstances.get(e.instance()) instanceof CoreGraph.Instantiate)) {
        throw unsupportedUnchecked("canon", "a lift of a core function no module instance exports");
      }
      if (main >= 0 && main != e.instance()) {
        throw unsupportedUnchecked("canon", "lifts from more than one core instance");
      }
      main = e.instance();
    }
    if (main < 0) {
      throw unsupportedUnchecked("canon", "no lifted function");
    }
    int mainModule = ((CoreGraph.Instantiate) coreInstances.get(main)).module();
    return new CoreGraph(modules, coreInstances, main, mainModule, importNames);
  }

  private static Malformed unsupported(String section, String what) {
    throw unsupportedUnchecked(section, what);
  }

  private static RuntimeException unsupportedUnchecked(String section, String what) {
    return ComponentBinary.refuse(
        Code.E_RUN_032,
        "the driver component is not supported: its " + section + " section has " + what);
  }

  private static String hex(int v) {
    return Integer.toHexString(v);
  }
}
