package io.capsule.driver.component;

import io.capsule.driver.engine.ByteReader;
import io.capsule.driver.engine.ByteReader.Malformed;
import io.capsule.driver.engine.CoreModule;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * One pass over a component's top-level sections (component-model Binary.md), keeping only what the
 * host needs: core modules, core instances, the core functions and memories aliased from core
 * instance exports, canon lifts with their options, imports, and exports. Anything the host does
 * not support is remembered as the first {@link #unsupported} reason (raised later, after the
 * interface and import checks, to keep docs/run-semantics.md §1's order).
 */
final class ComponentFacts {

  static final int SORT_CORE = 0x00;
  static final int CORE_FUNC = 0x00;
  static final int CORE_MEMORY = 0x02;
  static final int SORT_INSTANCE = 0x05;

  /** A core module of the component, in index order. */
  record Module(int index, byte[] bytes, CoreModule info) {}

  /** A core instance: {@code instantiate module} ({@code module >= 0}) or inline exports. */
  record CoreInstance(int module) {}

  /** A core item aliased from a core instance's export; {@code instance < 0} when not. */
  record CoreRef(int instance, String name) {}

  /** A canon lift and its options, by core index; -1 when an option is absent. */
  record Lift(int coreFunc, int memory, int realloc, int postReturn) {}

  /** A top-level export: name and sort. */
  record Export(String name, int sort) {}

  final List<Module> modules = new ArrayList<>();
  final List<CoreInstance> coreInstances = new ArrayList<>();
  final List<CoreRef> coreFuncs = new ArrayList<>();
  final List<CoreRef> coreMemories = new ArrayList<>();
  final List<Lift> lifts = new ArrayList<>();
  final List<String> imports = new ArrayList<>();
  final List<Export> exports = new ArrayList<>();
  Optional<String> unsupported = Optional.empty();

  /** Whether a {@code canon lower} or {@code resource.drop} was seen (only with imports). */
  boolean lowers;

  private void unsupported(String why) {
    if (unsupported.isEmpty()) {
      unsupported = Optional.of(why);
    }
  }

  static ComponentFacts read(byte[] bytes) throws Malformed {
    ComponentFacts facts = new ComponentFacts();
    ByteReader in = new ByteReader(bytes, 8, bytes.length);
    while (!in.atEnd()) {
      int id = in.u8();
      int size = in.u32();
      int start = in.position();
      in.skip(size);
      ByteReader s = new ByteReader(bytes, start, in.position());
      try {
        facts.section(id, s, bytes, start, in.position());
      } catch (Malformed e) {
        throw GraphReader.inSection(id, start, e);
      }
    }
    return facts;
  }

  private void section(int id, ByteReader s, byte[] bytes, int from, int to) throws Malformed {
    switch (id) {
      case 0, 3, 5, 7 -> {
        // custom, core types, component instances, types: nothing the host needs
      }
      case 1 -> module(bytes, from, to);
      case 2 -> coreInstances(s);
      case 4 -> nestedComponent(bytes, from, to);
      case 6 -> aliases(s);
      case 8 -> canons(s);
      case 9 -> unsupported("it has a component start function");
      case 10 -> imports(s);
      case 11 -> exports(s);
      default -> throw new Malformed("unknown component section id " + id);
    }
  }

  private void module(byte[] bytes, int from, int to) throws Malformed {
    byte[] module = Arrays.copyOfRange(bytes, from, to);
    modules.add(new Module(modules.size(), module, CoreModule.parse(module)));
  }

  private void coreInstances(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int kind = s.u8();
      if (kind == 0x00) {
        int module = s.u32();
        int args = s.u32();
        for (int a = 0; a < args; a++) {
          s.name();
          if (s.u8() != 0x12) {
            throw new Malformed("a core instantiate argument must be an instance");
          }
          s.u32();
        }
        coreInstances.add(new CoreInstance(module));
      } else if (kind == 0x01) {
        int exports = s.u32();
        for (int e = 0; e < exports; e++) {
          s.name();
          s.u8();
          s.u32();
        }
        coreInstances.add(new CoreInstance(-1));
      } else {
        throw new Malformed("unknown core instance kind 0x" + Integer.toHexString(kind));
      }
    }
  }

  /** A nested component holding core modules would run code the host never sees: refused. */
  private void nestedComponent(byte[] bytes, int from, int to) throws Malformed {
    if (to - from < 8) {
      throw new Malformed("a nested component shorter than its preamble");
    }
    ByteReader in = new ByteReader(bytes, from + 8, to);
    while (!in.atEnd()) {
      int id = in.u8();
      in.skip(in.u32());
      if (id == 1 || id == 4) {
        unsupported("a nested component holds core modules or components of its own");
        return;
      }
    }
  }

  private void aliases(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int sort = s.u8();
      int coreSort = sort == SORT_CORE ? s.u8() : -1;
      int target = s.u8();
      CoreRef ref;
      switch (target) {
        case 0x00 -> {
          s.u32();
          s.name();
          ref = new CoreRef(-1, "");
        }
        case 0x01 -> ref = new CoreRef(s.u32(), s.name());
        case 0x02 -> {
          s.u32();
          s.u32();
          ref = new CoreRef(-1, "");
        }
        default -> throw new Malformed("unknown alias target 0x" + Integer.toHexString(target));
      }
      if (coreSort == CORE_FUNC) {
        coreFuncs.add(ref);
      } else if (coreSort == CORE_MEMORY) {
        coreMemories.add(ref);
      }
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
          int func = s.u32();
          Lift lift = options(s, func);
          s.u32(); // the component function type
          lifts.add(lift);
        }
        case 0x01 -> {
          // canon lower: only meaningful with imports; GraphReader reads the wiring
          s.u8();
          s.u32();
          options(s, -1);
          lowers = true;
          coreFuncs.add(new CoreRef(-1, "")); // a core function, not an instance export
        }
        case 0x03 -> {
          s.u32();
          lowers = true;
          coreFuncs.add(new CoreRef(-1, ""));
        }
        case 0x02, 0x04 -> {
          unsupported("it defines resources of its own (canon resource.new / resource.rep)");
          return;
        }
        default -> {
          unsupported(
              "it uses canonical built-in 0x"
                  + Integer.toHexString(kind)
                  + " (async, threads or another extension)");
          return;
        }
      }
    }
  }

  private Lift options(ByteReader s, int func) throws Malformed {
    int memory = -1;
    int realloc = -1;
    int postReturn = -1;
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int opt = s.u8();
      switch (opt) {
        case 0x00 -> {
          // string-encoding=utf8, the only one the host speaks
        }
        case 0x01 -> unsupported("a lift uses string-encoding=utf16; only utf8 is supported");
        case 0x02 ->
            unsupported("a lift uses string-encoding=latin1+utf16; only utf8 is supported");
        case 0x03 -> memory = s.u32();
        case 0x04 -> realloc = s.u32();
        case 0x05 -> postReturn = s.u32();
        case 0x06 -> unsupported("a lift is async");
        case 0x07 -> {
          s.u32();
          unsupported("a lift is async (it has a callback)");
        }
        default -> {
          unsupported("a lift has canonical option 0x" + Integer.toHexString(opt));
          throw new Malformed("unknown canonical option 0x" + Integer.toHexString(opt));
        }
      }
    }
    return new Lift(func, memory, realloc, postReturn);
  }

  private void imports(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      imports.add(externName(s));
      skipExternDesc(s);
    }
  }

  private void exports(ByteReader s) throws Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      String name = externName(s);
      int sort = s.u8();
      if (sort == SORT_CORE) {
        s.u8();
      }
      s.u32();
      if (s.u8() == 0x01) {
        skipExternDesc(s);
      }
      exports.add(new Export(name, sort));
    }
  }

  /** {@code importname'} / {@code exportname'}: a prefix byte (0x00, or 0x01 in older encoders). */
  private static String externName(ByteReader s) throws Malformed {
    int prefix = s.u8();
    if (prefix != 0x00 && prefix != 0x01) {
      throw new Malformed("unknown extern name prefix 0x" + Integer.toHexString(prefix));
    }
    return s.name();
  }

  private void skipExternDesc(ByteReader s) throws Malformed {
    int kind = s.u8();
    switch (kind) {
      case 0x00 -> {
        s.u8();
        s.u32();
      }
      case 0x01, 0x04, 0x05 -> s.u32();
      case 0x03 -> {
        if (s.u8() == 0x00) {
          s.u32();
        }
      }
      case 0x02 -> {
        unsupported("it imports or exports a component value");
        throw new Malformed("component values are not supported");
      }
      default -> throw new Malformed("unknown extern kind 0x" + Integer.toHexString(kind));
    }
  }
}
