package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.wasm.DriverException;
import java.io.ByteArrayOutputStream;
import java.util.HexFormat;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The memory-cap rewrite and the refusals of {@link PreparedModule}, as a table. */
class CoreModuleTest {

  private static final long PAGE = CoreModule.PAGE;

  /** A module with only a memory section holding {@code limits} (hex, after the count). */
  private static byte[] moduleWithMemory(String limitsHex) {
    byte[] limits = HexFormat.of().parseHex(limitsHex);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(HexFormat.of().parseHex("0061736d01000000"));
    out.write(5);
    out.write(limits.length + 1);
    out.write(1);
    out.writeBytes(limits);
    return out.toByteArray();
  }

  static Stream<Arguments> caps() {
    return Stream.of(
        // limits, cap in pages, expected max pages after the rewrite
        Arguments.of("no maximum gets the cap", "0001", 16, 16L),
        Arguments.of("a larger maximum is lowered", "0101ff03", 16, 16L), // 1..511 pages
        Arguments.of("a smaller maximum stays", "010104", 16, 4L),
        Arguments.of("an equal maximum stays", "010110", 16, 16L),
        Arguments.of("the initial size may equal the cap", "0010", 16, 16L));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("caps")
  void theDeclaredMaximumBecomesAtMostTheCap(
      String what, String limits, int capPages, long expectedMax) throws Exception {
    PreparedModule p = PreparedModule.prepare(moduleWithMemory(limits), capPages * PAGE);
    CoreModule rewritten = CoreModule.parse(p.cappedBytes());
    assertEquals(1, rewritten.memories().size());
    assertEquals(OptionalLong.of(expectedMax), rewritten.memories().get(0).maxPages());
    assertEquals(
        CoreModule.parse(moduleWithMemory(limits)).memories().get(0).minPages(),
        rewritten.memories().get(0).minPages());
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of("a shared memory", "030110", "shared"),
        Arguments.of("a 64-bit memory", "050110", "64-bit"),
        Arguments.of("an initial size above the cap", "0011", "above the cap"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void aMemoryThatCannotBeCappedIsRefused(String what, String limits, String named) {
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> PreparedModule.prepare(moduleWithMemory(limits), 16 * PAGE));
    assertEquals(Code.E_RUN_032, e.code());
    assertTrue(e.getMessage().contains(named), e.getMessage());
  }

  @Test
  void aModuleWithoutMemoryIsLeftAlone() {
    byte[] bare = HexFormat.of().parseHex("0061736d01000000");
    assertArrayEquals(bare, PreparedModule.prepare(bare, 16 * PAGE).cappedBytes());
  }

  @Test
  void readsExportsWithTheirSignatures() throws Exception {
    CoreModule m = CoreModule.parse(Fixtures.bytes("minimal"));
    assertEquals(
        new CoreModule.FuncType(
            List.of(
                CoreModule.ValType.I32,
                CoreModule.ValType.I32,
                CoreModule.ValType.I32,
                CoreModule.ValType.I32),
            List.of(CoreModule.ValType.I32)),
        m.functionExports().get("cabi_realloc"));
    assertTrue(m.exportsMemory("memory"));
    assertEquals(List.of(), m.imports());
  }

  @Test
  void rejectsOverlongAndTruncatedIntegers() {
    assertThrows(
        ByteReader.Malformed.class,
        () -> new ByteReader(HexFormat.of().parseHex("ffffffff7f")).u32());
    assertThrows(
        ByteReader.Malformed.class, () -> new ByteReader(HexFormat.of().parseHex("80")).u32());
    assertThrows(
        ByteReader.Malformed.class,
        () -> new ByteReader(HexFormat.of().parseHex("808080808000")).u32());
  }
}
