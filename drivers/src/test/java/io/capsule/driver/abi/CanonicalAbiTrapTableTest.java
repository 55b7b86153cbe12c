package io.capsule.driver.abi;

import static io.capsule.driver.abi.WitType.payloadCase;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.wasm.AbiViolation;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The rows that must not lift: each writes a memory image at {@code 0x10} of a 64 KiB memory, then
 * lifts the type from a pointer ({@code load}) or from flat values ({@code flat}); the lift must
 * throw {@link AbiViolation} with {@code E-RUN-034} and a message holding the expected words.
 */
class CanonicalAbiTrapTableTest {
  static final int BASE = 0x10;
  static final WitType ENUM3 = WitType.enumOf("abc", "a", "b", "c");
  static final WitType STRINGS = WitType.list(Primitive.STRING);

  static Stream<Arguments> rows() {
    return Stream.of(
        load("bool 2 in memory", Primitive.BOOL, "02", BASE, "bool at 0x10 is 2"),
        load(
            "bool 255 in memory",
            Primitive.BOOL,
            "ff",
            BASE,
            "is 255; the host accepts only 0 or 1"),
        flat("bool 2 as a flat value", Primitive.BOOL, "", "2", "bool (flat) is 2"),
        load("misaligned s32", Primitive.S32, "00000000 00", BASE + 1, "not aligned to 4"),
        load("misaligned string slot", Primitive.STRING, "", BASE + 2, "not aligned to 4"),
        load(
            "pointer past the end", Primitive.STRING, "", 0xfffc, "reaches past the end of memory"),
        load("pointer near 2^32", Primitive.U64, "", 0xfffffff8, "reaches past the end of memory"),
        load(
            "string bytes past the end",
            Primitive.STRING,
            "f0ff0000 00010000",
            BASE,
            "string at 0xfff0 with byte length 256 reaches past the end"),
        load(
            "string length near 2^32",
            Primitive.STRING,
            "18000000 ffffffff",
            BASE,
            "byte length 4294967295 reaches past the end"),
        load(
            "invalid UTF-8 (lone continuation)",
            Primitive.STRING,
            "18000000 02000000 c328",
            BASE,
            "not valid UTF-8: bad byte 0xc3 at offset 0"),
        load(
            "invalid UTF-8 (encoded surrogate)",
            Primitive.STRING,
            "18000000 04000000 61eda080",
            BASE,
            "not valid UTF-8: bad byte 0xed at offset 1"),
        load(
            "invalid UTF-8 (overlong)",
            Primitive.STRING,
            "18000000 02000000 c0af",
            BASE,
            "not valid UTF-8"),
        load(
            "invalid UTF-8 (truncated at the end)",
            Primitive.STRING,
            "18000000 03000000 61e282",
            BASE,
            "not valid UTF-8: bad byte 0xe2 at offset 1"),
        flat(
            "invalid UTF-8 in a flat string",
            Primitive.STRING,
            "ff",
            "10 1",
            "string at 0x10 (1 bytes) is not valid UTF-8"),
        load("enum discriminant out of range", ENUM3, "03", BASE, "abc at 0x10 has discriminant 3"),
        load(
            "option discriminant 2",
            WitType.option(Primitive.S32),
            "02000000 00000000",
            BASE,
            "option<s32> at 0x10 has discriminant 2; it has 2 cases"),
        flat(
            "flat variant discriminant out of range",
            WitType.result(Optional.of(Primitive.STRING), Optional.empty()),
            "",
            "5 0 0",
            "has discriminant 5"),
        load(
            "list length × element size overflows 32 bits",
            STRINGS,
            "18000000 00000020",
            BASE,
            "length 536870912 × element size 8 = 4294967296 bytes overflows"),
        load(
            "list reaches past the end",
            WitType.list(Primitive.U64),
            "18000000 00000100",
            BASE,
            "length 65536 × element size 8 reaches past the end of memory"),
        flat(
            "huge flat list<u8> length",
            WitType.list(Primitive.U8),
            "",
            "10 ffffffff",
            "length 4294967295 × element size 1 reaches past the end"),
        load(
            "misaligned list<u64> elements",
            WitType.list(Primitive.U64),
            "1c000000 01000000",
            BASE,
            "list<u64> at 0x1c is not aligned to 8"),
        load(
            "bad string inside a list element",
            STRINGS,
            "18000000 01000000 20000000 01000000 80",
            BASE,
            "string at 0x20 (1 bytes) is not valid UTF-8"),
        load(
            "strings aliasing one region beyond the memory's size",
            STRINGS,
            "20000000 03000000 0000 0000 0000 0000"
                + " 00010000 00600000 00010000 00600000 00010000 00600000",
            BASE,
            "string at 0x100 takes the lifted value past 65536 bytes"),
        flat(
            "i64-joined slot with high bits set read as s32",
            WitType.variant("v", payloadCase("a", Primitive.U64), payloadCase("b", Primitive.S32)),
            "",
            "1 100000005",
            "joined to i64 holds 0x100000005"),
        flat(
            "too few flat values",
            Primitive.STRING,
            "",
            "10",
            "returned 1 core values; lifting needs more"),
        flat("too many flat values", Primitive.S32, "", "1 2", "2 core values given for s32"));
  }

  static Arguments load(String name, WitType type, String image, int ptr, String expected) {
    return Arguments.of(name, type, image, ptr, null, expected);
  }

  static Arguments flat(String name, WitType type, String image, String flat, String expected) {
    return Arguments.of(name, type, image, 0, flat, expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void refusesToLift(
      String name, WitType type, String image, int ptr, String flat, String expected) {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x10000);
    if (!image.isEmpty()) {
      memory.write(BASE, image);
    }
    CanonicalAbi abi = new CanonicalAbi(memory);

    AbiViolation e =
        assertThrows(
            AbiViolation.class,
            () -> {
              if (flat == null) {
                abi.load(type, ptr);
              } else {
                abi.liftFlat(type, AbiValues.flat(flat));
              }
            });

    assertEquals(Code.E_RUN_034, e.code());
    assertTrue(
        e.diagnostic().message().contains(expected),
        () -> "message was: " + e.diagnostic().message());
  }

  @Test
  void namesThePathToAViolationDeepInsideAValue() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x10000);
    // list<event> of two events at 0x100: a good note, then a tool-call whose name is not UTF-8.
    memory.write(BASE, "00010000 02000000");
    memory.write(0x100, "0b 00000000000000 00020000 01000000");
    memory.write(0x158, "05 00000000000000 00020000 01000000 01020000 01000000 00020000 00000000");
    memory.write(0x200, "61 ff");
    CanonicalAbi abi = new CanonicalAbi(memory);

    AbiViolation e = assertThrows(AbiViolation.class, () -> abi.load(ContractTypes.EVENTS, BASE));

    assertEquals("[1].tool-call.name", e.diagnostic().details().get("path"));
    assertTrue(e.diagnostic().message().startsWith("string at 0x201 (1 bytes) is not valid UTF-8"));
  }

  @Test
  void refusesAMisalignedPointerFromCabiRealloc() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x10000);
    memory.overrideRealloc(size -> 0x11);
    CanonicalAbi abi = new CanonicalAbi(memory);

    AbiViolation e =
        assertThrows(
            AbiViolation.class, () -> abi.lowerFlat(WitType.list(Primitive.U64), List.of(1L)));

    assertTrue(e.diagnostic().message().contains("cabi_realloc returned 0x11"));
    assertTrue(e.diagnostic().message().contains("not aligned to 8"));
  }

  @Test
  void refusesAnOutOfBoundsPointerFromCabiRealloc() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x10000);
    memory.overrideRealloc(size -> 0xfffe);
    CanonicalAbi abi = new CanonicalAbi(memory);

    AbiViolation e =
        assertThrows(AbiViolation.class, () -> abi.lowerFlat(Primitive.STRING, "hello"));

    assertTrue(
        e.diagnostic().message().contains("returned 0xfffe for a string of 5 bytes"),
        e.diagnostic().message());
    assertTrue(e.diagnostic().message().contains("past the end of memory"));
  }

  @Test
  void refusesAHostValueOfTheWrongTypeAsAHostBug() {
    CanonicalAbi abi = new CanonicalAbi(new ByteArrayGuestMemory(64));

    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> abi.lowerFlat(Primitive.U32, 5));

    assertEquals("u32 lowers from a Long, not Integer", e.getMessage());
  }

  @Test
  void canonicalizesEveryNanOnLift() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(64);
    memory.write(BASE, "0100000000f8ff7f");

    Object lifted = new CanonicalAbi(memory).load(Primitive.F64, BASE);

    assertEquals(
        Double.doubleToRawLongBits(Double.NaN), Double.doubleToRawLongBits((Double) lifted));
  }
}
