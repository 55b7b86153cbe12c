package io.capsule.driver.engine;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Rewrites the names in a core module's import section, keeping every import's kind and type. The
 * wasmtime engine uses it to wire a component's core graph inside one wasmtime {@code Linker}:
 * wasmtime-java 0.19 cannot hand a table (or global) from one instance to another through Java, but
 * its linker resolves names natively, so each import is renamed to the unique name its provider is
 * registered under. It also renames one export ({@link #renameExport}): wasmtime's linker calls a
 * module's {@code _initialize} as soon as it registers it, but in a component graph the fixup
 * module's start function calls it, after the indirect-call table the initializer calls through is
 * filled. Pure.
 */
final class ImportRenamer {
  private ImportRenamer() {}

  /** One import's new {@code module.name}. */
  record Name(String module, String name) {}

  /** {@code module} with its imports renamed, in order, to {@code names}. */
  static byte[] rename(byte[] module, List<Name> names) throws ByteReader.Malformed {
    ByteReader in = new ByteReader(module, 8, module.length);
    ByteArrayOutputStream out = new ByteArrayOutputStream(module.length + 256);
    out.write(module, 0, 8);
    while (!in.atEnd()) {
      int sectionStart = in.position();
      int id = in.u8();
      int size = in.u32();
      int contentStart = in.position();
      in.skip(size);
      if (id != 2) {
        out.write(module, sectionStart, in.position() - sectionStart);
        continue;
      }
      ByteReader s = new ByteReader(module, contentStart, in.position());
      int n = s.u32();
      if (n != names.size()) {
        throw new ByteReader.Malformed(
            "the module has " + n + " imports, but " + names.size() + " names were given");
      }
      ByteArrayOutputStream section = new ByteArrayOutputStream(size + 256);
      leb(section, n);
      for (int i = 0; i < n; i++) {
        s.name();
        s.name();
        int descStart = s.position();
        skipDesc(s);
        string(section, names.get(i).module());
        string(section, names.get(i).name());
        section.write(module, descStart, s.position() - descStart);
      }
      out.write(2);
      leb(out, section.size());
      byte[] content = section.toByteArray();
      out.write(content, 0, content.length);
    }
    return out.toByteArray();
  }

  /** {@code module} with its export {@code from} (when present) named {@code to}. */
  static byte[] renameExport(byte[] module, String from, String to) throws ByteReader.Malformed {
    ByteReader in = new ByteReader(module, 8, module.length);
    ByteArrayOutputStream out = new ByteArrayOutputStream(module.length + 64);
    out.write(module, 0, 8);
    while (!in.atEnd()) {
      int sectionStart = in.position();
      int id = in.u8();
      int size = in.u32();
      int contentStart = in.position();
      in.skip(size);
      if (id != 7) {
        out.write(module, sectionStart, in.position() - sectionStart);
        continue;
      }
      ByteReader s = new ByteReader(module, contentStart, in.position());
      int n = s.u32();
      ByteArrayOutputStream section = new ByteArrayOutputStream(size + 64);
      leb(section, n);
      for (int i = 0; i < n; i++) {
        String name = s.name();
        int descStart = s.position();
        s.u8();
        s.u32();
        string(section, name.equals(from) ? to : name);
        section.write(module, descStart, s.position() - descStart);
      }
      out.write(7);
      leb(out, section.size());
      byte[] content = section.toByteArray();
      out.write(content, 0, content.length);
    }
    return out.toByteArray();
  }

  private static void skipDesc(ByteReader s) throws ByteReader.Malformed {
    int kind = s.u8();
    switch (kind) {
      case 0x00 -> s.u32();
      case 0x01 -> {
        s.u8();
        limits(s);
      }
      case 0x02 -> limits(s);
      case 0x03 -> {
        s.u8();
        s.u8();
      }
      case 0x04 -> {
        s.u8();
        s.u32();
      }
      default ->
          throw new ByteReader.Malformed("unknown import kind 0x" + Integer.toHexString(kind));
    }
  }

  private static void limits(ByteReader s) throws ByteReader.Malformed {
    int flags = s.u8();
    boolean is64 = (flags & 0x04) != 0;
    if (is64) {
      s.u64();
    } else {
      s.u32();
    }
    if ((flags & 0x01) != 0) {
      if (is64) {
        s.u64();
      } else {
        s.u32();
      }
    }
  }

  private static void string(ByteArrayOutputStream out, String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    leb(out, bytes.length);
    out.write(bytes, 0, bytes.length);
  }

  private static void leb(ByteArrayOutputStream out, long value) {
    long v = value;
    do {
      int b = (int) (v & 0x7f);
      v >>>= 7;
      out.write(v == 0 ? b : b | 0x80);
    } while (v != 0);
  }
}
