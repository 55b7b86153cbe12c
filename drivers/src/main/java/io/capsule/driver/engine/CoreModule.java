package io.capsule.driver.engine;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the host needs to know about a core WebAssembly module before compiling it: its imports,
 * exports (with the signatures of exported functions), and memories; plus the one rewrite the host
 * makes, capping the declared memory maximum (wasmtime-java has no memory limiter, so the declared
 * maximum is the only bound it enforces; Chicory gets the same bytes so both engines agree).
 *
 * <p>Reads only the section headers and the type, import, function, memory and export sections;
 * function bodies are left to the engine's validator. Immutable and thread-safe.
 */
public final class CoreModule {

  /** 64 KiB, the core WebAssembly page. */
  public static final long PAGE = 65_536;

  private static final int SECTION_TYPE = 1;
  private static final int SECTION_IMPORT = 2;
  private static final int SECTION_FUNCTION = 3;
  private static final int SECTION_MEMORY = 5;
  private static final int SECTION_EXPORT = 7;
  private static final int SECTION_START = 8;

  /** A core value type as far as calls need it. */
  public enum ValType {
    I32,
    I64,
    F32,
    F64,
    V128,
    FUNCREF,
    EXTERNREF
  }

  /** A core function type. */
  public record FuncType(List<ValType> params, List<ValType> results) {
    public FuncType {
      params = List.copyOf(params);
      results = List.copyOf(results);
    }
  }

  /** One import: {@code module.name} and what it imports. */
  public record Import(String module, String name, String kind) {
    /** {@code module.name}, as diagnostics name it. */
    public String qualified() {
      return module + "." + name;
    }
  }

  /** One memory's limits, in pages. */
  public record MemoryLimits(long minPages, OptionalLong maxPages, boolean shared, boolean is64) {}

  private final byte[] bytes;
  private final List<Import> imports;
  private final Map<String, Integer> exportKinds;
  private final Map<String, FuncType> functionExports;
  private final List<MemoryLimits> memories;
  private final int memorySectionStart;
  private final int memorySectionEnd;
  private final boolean hasStart;
  private final List<FuncType> importFuncTypes;

  private CoreModule(
      byte[] bytes,
      List<Import> imports,
      Map<String, Integer> exportKinds,
      Map<String, FuncType> functionExports,
      List<MemoryLimits> memories,
      int memorySectionStart,
      int memorySectionEnd,
      boolean hasStart,
      List<FuncType> importFuncTypes) {
    this.bytes = bytes;
    this.importFuncTypes = List.copyOf(importFuncTypes);
    this.imports = List.copyOf(imports);
    this.exportKinds = Collections.unmodifiableMap(exportKinds);
    this.functionExports = Collections.unmodifiableMap(functionExports);
    this.memories = List.copyOf(memories);
    this.memorySectionStart = memorySectionStart;
    this.memorySectionEnd = memorySectionEnd;
    this.hasStart = hasStart;
  }

  /** Whether {@code bytes} start like a core module (magic, version 1). */
  public static boolean looksLikeCoreModule(byte[] bytes) {
    return bytes.length >= 8
        && bytes[0] == 0
        && bytes[1] == 'a'
        && bytes[2] == 's'
        && bytes[3] == 'm'
        && bytes[4] == 1
        && bytes[5] == 0
        && bytes[6] == 0
        && bytes[7] == 0;
  }

  /** Parses the parts the host needs; the bytes are kept (not copied: callers do not mutate). */
  public static CoreModule parse(byte[] bytes) throws ByteReader.Malformed {
    if (!looksLikeCoreModule(bytes)) {
      throw new ByteReader.Malformed("not a core WebAssembly module (bad magic or version)");
    }
    ByteReader in = new ByteReader(bytes, 8, bytes.length);
    List<FuncType> types = new ArrayList<>();
    List<Import> imports = new ArrayList<>();
    List<Integer> funcTypes = new ArrayList<>(); // imported functions first, then defined ones
    List<MemoryLimits> memories = new ArrayList<>();
    Map<String, Integer> exportKinds = new LinkedHashMap<>();
    Map<String, Integer> exportIndices = new LinkedHashMap<>();
    int memStart = -1;
    int memEnd = -1;
    boolean hasStart = false;
    while (!in.atEnd()) {
      int sectionStart = in.position();
      int id = in.u8();
      int size = in.u32();
      int contentStart = in.position();
      in.skip(size);
      int contentEnd = in.position();
      ByteReader s = new ByteReader(bytes, contentStart, contentEnd);
      switch (id) {
        case SECTION_TYPE -> readTypes(s, types);
        case SECTION_IMPORT -> readImports(s, imports, funcTypes, memories);
        case SECTION_FUNCTION -> {
          int n = s.u32();
          for (int i = 0; i < n; i++) {
            funcTypes.add(s.u32());
          }
        }
        case SECTION_MEMORY -> {
          int n = s.u32();
          for (int i = 0; i < n; i++) {
            memories.add(limits(s));
          }
          memStart = sectionStart;
          memEnd = contentEnd;
        }
        case SECTION_EXPORT -> {
          int n = s.u32();
          for (int i = 0; i < n; i++) {
            String name = s.name();
            int kind = s.u8();
            int index = s.u32();
            exportKinds.put(name, kind);
            exportIndices.put(name, index);
          }
        }
        case SECTION_START -> hasStart = true;
        default -> {
          // other sections are the engine's to validate
        }
      }
    }
    Map<String, FuncType> functionExports = new LinkedHashMap<>();
    for (Map.Entry<String, Integer> e : exportKinds.entrySet()) {
      if (e.getValue() == 0) {
        int index = exportIndices.get(e.getKey());
        if (index < 0 || index >= funcTypes.size()) {
          throw new ByteReader.Malformed("export " + e.getKey() + " names no function");
        }
        int type = funcTypes.get(index);
        if (type < 0 || type >= types.size() || types.get(type) == null) {
          throw new ByteReader.Malformed("function type " + type + " is not a function type");
        }
        functionExports.put(e.getKey(), types.get(type));
      }
    }
    List<FuncType> importFuncTypes = new ArrayList<>();
    int funcImport = 0;
    for (Import i : imports) {
      if (i.kind().equals("func")) {
        int type = funcTypes.get(funcImport++);
        if (type < 0 || type >= types.size() || types.get(type) == null) {
          throw new ByteReader.Malformed("import " + i.qualified() + " has no function type");
        }
        importFuncTypes.add(types.get(type));
      }
    }
    return new CoreModule(
        bytes,
        imports,
        exportKinds,
        functionExports,
        memories,
        memStart,
        memEnd,
        hasStart,
        importFuncTypes);
  }

  private static void readTypes(ByteReader s, List<FuncType> types) throws ByteReader.Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      int form = s.u8();
      if (form != 0x60) {
        throw new ByteReader.Malformed(
            "type " + i + " is not a function type (GC and other type proposals are unsupported)");
      }
      List<ValType> params = valTypes(s);
      List<ValType> results = valTypes(s);
      types.add(new FuncType(params, results));
    }
  }

  private static List<ValType> valTypes(ByteReader s) throws ByteReader.Malformed {
    int n = s.u32();
    List<ValType> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(valType(s.u8()));
    }
    return out;
  }

  private static ValType valType(int code) throws ByteReader.Malformed {
    return switch (code) {
      case 0x7f -> ValType.I32;
      case 0x7e -> ValType.I64;
      case 0x7d -> ValType.F32;
      case 0x7c -> ValType.F64;
      case 0x7b -> ValType.V128;
      case 0x70 -> ValType.FUNCREF;
      case 0x6f -> ValType.EXTERNREF;
      default ->
          throw new ByteReader.Malformed("unknown value type 0x" + Integer.toHexString(code));
    };
  }

  private static void readImports(
      ByteReader s, List<Import> imports, List<Integer> funcTypes, List<MemoryLimits> memories)
      throws ByteReader.Malformed {
    int n = s.u32();
    for (int i = 0; i < n; i++) {
      String module = s.name();
      String name = s.name();
      int kind = s.u8();
      switch (kind) {
        case 0x00 -> {
          funcTypes.add(s.u32());
          imports.add(new Import(module, name, "func"));
        }
        case 0x01 -> {
          s.u8(); // reftype
          limits(s);
          imports.add(new Import(module, name, "table"));
        }
        case 0x02 -> {
          memories.add(limits(s));
          imports.add(new Import(module, name, "memory"));
        }
        case 0x03 -> {
          s.u8(); // valtype
          s.u8(); // mutability
          imports.add(new Import(module, name, "global"));
        }
        case 0x04 -> {
          s.u8(); // attribute
          s.u32(); // type
          imports.add(new Import(module, name, "tag"));
        }
        default ->
            throw new ByteReader.Malformed("unknown import kind 0x" + Integer.toHexString(kind));
      }
    }
  }

  private static MemoryLimits limits(ByteReader s) throws ByteReader.Malformed {
    int flags = s.u8();
    if ((flags & ~0x07) != 0) {
      throw new ByteReader.Malformed("unsupported limits flags 0x" + Integer.toHexString(flags));
    }
    boolean hasMax = (flags & 0x01) != 0;
    boolean shared = (flags & 0x02) != 0;
    boolean is64 = (flags & 0x04) != 0;
    long min = is64 ? s.u64() : Integer.toUnsignedLong(s.u32());
    OptionalLong max =
        hasMax
            ? OptionalLong.of(is64 ? s.u64() : Integer.toUnsignedLong(s.u32()))
            : OptionalLong.empty();
    return new MemoryLimits(min, max, shared, is64);
  }

  public List<Import> imports() {
    return imports;
  }

  /** The types of the imported functions, in import order (other imports skipped). */
  public List<FuncType> importFuncTypes() {
    return importFuncTypes;
  }

  /** Whether the module defines a memory of its own (a memory section), not just imports one. */
  public boolean definesMemory() {
    return memorySectionStart >= 0;
  }

  /** Every export name, in order. */
  public List<String> exportNames() {
    return List.copyOf(exportKinds.keySet());
  }

  /** Exported functions with their types, in export order. */
  public Map<String, FuncType> functionExports() {
    return functionExports;
  }

  /** Whether {@code name} is exported as a memory. */
  public boolean exportsMemory(String name) {
    Integer kind = exportKinds.get(name);
    return kind != null && kind == 0x02;
  }

  public List<MemoryLimits> memories() {
    return memories;
  }

  public boolean hasStartFunction() {
    return hasStart;
  }

  /**
   * Why this module's memory cannot be capped at {@code capBytes}, or empty when it can: a shared
   * or 64-bit memory, more than one memory, or an initial size above the cap.
   */
  public Optional<String> memoryProblem(long capBytes) {
    if (memories.size() > 1) {
      return Optional.of("it declares " + memories.size() + " memories; a driver has one");
    }
    for (MemoryLimits m : memories) {
      if (m.shared()) {
        return Optional.of("its memory is shared; a driver's memory is private to one instance");
      }
      if (m.is64()) {
        return Optional.of("its memory is 64-bit; only 32-bit memories are supported");
      }
      if (m.minPages() * PAGE > capBytes) {
        return Optional.of(
            "its memory starts at "
                + m.minPages() * PAGE
                + " bytes, above the cap of "
                + capBytes
                + " bytes");
      }
    }
    return Optional.empty();
  }

  /**
   * The module bytes with the memory's declared maximum lowered to {@code capBytes} (rounded down
   * to whole pages), or the same bytes when it declares no memory or a lower maximum already.
   * Precondition: {@link #memoryProblem} is empty.
   */
  public byte[] withMemoryCap(long capBytes) {
    if (memorySectionStart < 0 || memories.isEmpty()) {
      return bytes;
    }
    MemoryLimits m = memories.get(0);
    long capPages = capBytes / PAGE;
    if (m.maxPages().isPresent() && m.maxPages().getAsLong() <= capPages) {
      return bytes;
    }
    ByteArrayOutputStream content = new ByteArrayOutputStream();
    content.write(1); // one memory
    content.write(0x01); // limits with a maximum, unshared, 32-bit
    writeLeb(content, m.minPages());
    writeLeb(content, capPages);
    byte[] section = content.toByteArray();
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + 8);
    out.write(bytes, 0, memorySectionStart);
    out.write(SECTION_MEMORY);
    writeLeb(out, section.length);
    out.write(section, 0, section.length);
    out.write(bytes, memorySectionEnd, bytes.length - memorySectionEnd);
    return out.toByteArray();
  }

  private static void writeLeb(ByteArrayOutputStream out, long value) {
    long v = value;
    do {
      int b = (int) (v & 0x7f);
      v >>>= 7;
      out.write(v == 0 ? b : b | 0x80);
    } while (v != 0);
  }
}
