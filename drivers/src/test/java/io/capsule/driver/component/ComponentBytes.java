package io.capsule.driver.component;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes small component binaries section by section (Binary.md encodings), for the shapes jco will
 * not produce: imports, async lifts, other string encodings, extra core modules. Each call appends
 * one section; indices are the caller's to track.
 */
final class ComponentBytes {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  ComponentBytes() {
    out.writeBytes(new byte[] {0, 'a', 's', 'm', 0x0d, 0, 1, 0});
  }

  byte[] bytes() {
    return out.toByteArray();
  }

  ComponentBytes coreModule(byte[] module) {
    return section(1, module);
  }

  ComponentBytes instantiate(int module) {
    Buf b = new Buf().u32(1).u8(0x00).u32(module).u32(0);
    return section(2, b.bytes());
  }

  ComponentBytes aliasCoreFunc(int instance, String name) {
    return section(6, new Buf().u32(1).u8(0x00).u8(0x00).u8(0x01).u32(instance).name(name).bytes());
  }

  ComponentBytes aliasCoreMemory(int instance, String name) {
    return section(6, new Buf().u32(1).u8(0x00).u8(0x02).u8(0x01).u32(instance).name(name).bytes());
  }

  /**
   * A canon lift of core function {@code func}; each option is its opcode, then its index when it
   * has one ({@code {0x03, 0}} is {@code (memory 0)}, {@code {0x00}} is utf8).
   */
  ComponentBytes lift(int func, int[]... options) {
    Buf b = new Buf().u32(1).u8(0x00).u8(0x00).u32(func).u32(options.length);
    for (int[] o : options) {
      b.u8(o[0]);
      for (int i = 1; i < o.length; i++) {
        b.u32(o[i]);
      }
    }
    b.u32(0); // the component function type (the reader does not check types)
    return section(8, b.bytes());
  }

  ComponentBytes canonLower() {
    return section(8, new Buf().u32(1).u8(0x01).u8(0x00).u32(0).u32(0).bytes());
  }

  ComponentBytes importFunc(String name) {
    return section(10, new Buf().u32(1).u8(0x00).name(name).u8(0x01).u32(0).bytes());
  }

  /** {@code (import "name" (instance (type 0)))}: how a component imports a WASI interface. */
  ComponentBytes importInstance(String name) {
    return section(10, new Buf().u32(1).u8(0x00).name(name).u8(0x05).u32(0).bytes());
  }

  /** A section given as raw content. */
  ComponentBytes raw(int id, int... content) {
    Buf b = new Buf();
    for (int c : content) {
      b.u8(c);
    }
    return section(id, b.bytes());
  }

  ComponentBytes exportInstance(String name, int instance) {
    return section(11, new Buf().u32(1).u8(0x00).name(name).u8(0x05).u32(instance).u8(0).bytes());
  }

  private ComponentBytes section(int id, byte[] content) {
    out.write(id);
    out.writeBytes(new Buf().u32(content.length).bytes());
    out.writeBytes(content);
    return this;
  }

  private static final class Buf {
    private final ByteArrayOutputStream b = new ByteArrayOutputStream();

    Buf u8(int v) {
      b.write(v);
      return this;
    }

    Buf u32(int v) {
      long x = Integer.toUnsignedLong(v);
      do {
        int low = (int) (x & 0x7f);
        x >>>= 7;
        b.write(x == 0 ? low : low | 0x80);
      } while (x != 0);
      return this;
    }

    Buf name(String s) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      u32(utf8.length);
      b.writeBytes(utf8);
      return this;
    }

    byte[] bytes() {
      return b.toByteArray();
    }
  }
}
