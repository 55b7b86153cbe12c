package io.capsule.driver.component;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.capsule.config.diag.Code;
import io.capsule.driver.engine.ByteReader;
import io.capsule.driver.engine.Fixtures;
import io.capsule.driver.wasm.DriverException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The component reader on a real WASI component (the jsonl driver with the preview1 adapter's
 * graph) damaged byte by byte: whatever the damage, it reads the graph or refuses with {@code
 * E-RUN-029} or {@code E-RUN-032}, never an internal error (an index exception, a loop over a
 * length it never checked). Deterministic: a fixed seed over the component-level sections, where
 * the graph is described (the core modules' own bytes are the core module reader's concern).
 */
class GraphReaderMutationTest {

  private static final byte[] WASI = Fixtures.bytes("wasi/jsonl-wasi");

  /** The offsets of every byte outside the core module sections' contents. */
  private static List<Integer> graphBytes() throws ByteReader.Malformed {
    List<Integer> offsets = new ArrayList<>();
    ByteReader in = new ByteReader(WASI, 8, WASI.length);
    while (!in.atEnd()) {
      int header = in.position();
      int id = in.u8();
      int size = in.u32();
      int start = in.position();
      in.skip(size);
      for (int i = header; i < (id == 1 ? start : in.position()); i++) {
        offsets.add(i);
      }
    }
    return offsets;
  }

  private static void readsOrRefusesWithItsCode(byte[] bytes, String what) {
    try {
      ComponentBinary.read(bytes);
    } catch (DriverException e) {
      assertTrue(
          e.code() == Code.E_RUN_029 || e.code() == Code.E_RUN_032, what + ": " + e.getMessage());
    } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
      fail(what + ": an internal error instead of a refusal with its code", e);
    }
  }

  @Test
  void aDamagedByteIsReadOrRefusedWithItsCode() throws ByteReader.Malformed {
    List<Integer> offsets = graphBytes();
    assertTrue(offsets.size() > 1000, "the adapter graph is described in " + offsets.size());
    Random random = new Random(14);
    int[] values = {0x00, 0x01, 0x7f, 0x80, 0xff};
    for (int round = 0; round < 1500; round++) {
      int at = offsets.get(random.nextInt(offsets.size()));
      byte[] damaged = WASI.clone();
      damaged[at] =
          (byte) (round % 2 == 0 ? values[random.nextInt(values.length)] : damaged[at] + 1);
      readsOrRefusesWithItsCode(damaged, "byte " + at + " set to " + (damaged[at] & 0xff));
    }
  }

  @Test
  void aLengthMadeHugeIsRefusedNotLoopedOver() throws ByteReader.Malformed {
    List<Integer> offsets = graphBytes();
    Random random = new Random(1414);
    for (int round = 0; round < 300; round++) {
      int at = offsets.get(random.nextInt(offsets.size() - 5));
      byte[] damaged = WASI.clone();
      // a five-byte LEB128 of 0x7fffffff where a count or index may be
      byte[] leb = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07};
      System.arraycopy(leb, 0, damaged, at, leb.length);
      readsOrRefusesWithItsCode(damaged, "0x7fffffff written at " + at);
    }
  }

  @Test
  void aTruncatedComponentIsRefused() throws ByteReader.Malformed {
    List<Integer> offsets = graphBytes();
    for (int i = 0; i < offsets.size(); i += Math.max(1, offsets.size() / 200)) {
      int length = offsets.get(i);
      readsOrRefusesWithItsCode(java.util.Arrays.copyOf(WASI, length), "cut at " + length);
    }
  }
}
