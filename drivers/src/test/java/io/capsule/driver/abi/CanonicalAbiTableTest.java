package io.capsule.driver.abi;

import static io.capsule.driver.abi.WitType.field;
import static io.capsule.driver.abi.WitType.payloadCase;
import static io.capsule.driver.abi.WitType.unitCase;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The canonical ABI as a table: each row is a WIT type, a value, the memory image {@code storeNew}
 * leaves from {@link ByteArrayGuestMemory#HEAP_BASE} (the value's own slot first, then what it
 * points to, in allocation order) and the flat values {@code lowerFlat} gives in a fresh memory.
 * Every row is round-tripped: the image and the flat values both lift back to the value.
 */
class CanonicalAbiTableTest {
  static final int MEMORY = 0x10000;

  static final WitType OPT_S32 = WitType.option(Primitive.S32);
  static final WitType OPT_U64 = WitType.option(Primitive.U64);
  static final WitType ABC = WitType.enumOf("abc", "a", "b", "c");
  static final WitType MIXED =
      WitType.variant(
          "mixed",
          payloadCase("a", Primitive.U64),
          payloadCase("b", Primitive.F64),
          payloadCase("c", Primitive.S32),
          unitCase("d"));
  static final WitType FLOAT_OR_STRING =
      WitType.variant(
          "float-or-string", payloadCase("a", Primitive.F64), payloadCase("b", Primitive.STRING));
  static final WitType PADDED =
      WitType.record(
          "padded",
          field("a", Primitive.BOOL),
          field("b", Primitive.U64),
          field("c", Primitive.BOOL));
  static final WitType BIG_ENUM =
      new EnumType("big", IntStream.range(0, 257).mapToObj(i -> "c" + i).toList());

  static Stream<Arguments> rows() {
    return Stream.of(
        row("bool true", Primitive.BOOL, true, "01", "1"),
        row("bool false", Primitive.BOOL, false, "00", "0"),
        row("s32 -2", Primitive.S32, -2, "feffffff", "fffffffe"),
        row("u32 max", Primitive.U32, 0xffff_ffffL, "ffffffff", "ffffffff"),
        row("u64 max", Primitive.U64, -1L, "ffffffffffffffff", "ffffffffffffffff"),
        row("f64 0.5", Primitive.F64, 0.5, "000000000000e03f", "3fe0000000000000"),
        row("string", Primitive.STRING, "hi", "18000000 02000000 6869", "10 2"),
        row("empty string", Primitive.STRING, "", "18000000 00000000", "10 0"),
        row(
            "multi-byte string",
            Primitive.STRING,
            "é€😀",
            "18000000 09000000 c3a9e282acf09f9880",
            "10 9"),
        row(
            "list<u8>",
            WitType.list(Primitive.U8),
            new byte[] {1, 2, 3},
            "18000000 03000000 010203",
            "10 3"),
        row(
            "list<string>",
            WitType.list(Primitive.STRING),
            List.of("a", "bc"),
            "18000000 02000000 28000000 01000000 29000000 02000000 61 6263",
            "10 2"),
        row("option<s32> none", OPT_S32, Optional.empty(), "00000000 00000000", "0 0"),
        row("option<s32> some", OPT_S32, Optional.of(7), "01000000 07000000", "1 7"),
        row(
            "option<u64> some",
            OPT_U64,
            Optional.of(5L),
            "01 00000000000000 0500000000000000",
            "1 5"),
        row(
            "option<f64> some",
            WitType.option(Primitive.F64),
            Optional.of(1.0),
            "01 00000000000000 000000000000f03f",
            "1 3ff0000000000000"),
        row(
            "option<string> some",
            WitType.option(Primitive.STRING),
            Optional.of("x"),
            "01000000 1c000000 01000000 78",
            "1 10 1"),
        row(
            "result<string, string> error",
            WitType.result(Optional.of(Primitive.STRING), Optional.of(Primitive.STRING)),
            WitVariant.of(ResultType.ERROR, "no"),
            "01000000 1c000000 02000000 6e6f",
            "1 10 2"),
        row(
            "result<_, _> ok",
            WitType.result(Optional.empty(), Optional.empty()),
            WitVariant.of(ResultType.OK),
            "00",
            "0"),
        row("enum third case", ABC, new WitEnum(2), "02", "2"),
        row("enum of 257 cases: u16 discriminant", BIG_ENUM, new WitEnum(256), "0001", "100"),
        row(
            "record padded to its u64",
            PADDED,
            WitRecord.of(true, 3L, false),
            "01 00000000000000 0300000000000000 00 00000000000000",
            "1 3 0"),
        row(
            "tuple<string, string>",
            WitType.tuple(Primitive.STRING, Primitive.STRING),
            WitRecord.of("k", "v"),
            "20000000 01000000 21000000 01000000 6b 76",
            "10 1 11 1"),
        row(
            "variant s32 case in an i64-joined slot",
            MIXED,
            WitVariant.of(2, -1),
            "02 00000000000000 ffffffff 00000000",
            "2 ffffffff"),
        row(
            "variant f64 case in an i64-joined slot",
            MIXED,
            WitVariant.of(1, 0.5),
            "01 00000000000000 000000000000e03f",
            "1 3fe0000000000000"),
        row(
            "variant case without payload pads its slot",
            MIXED,
            WitVariant.of(3),
            "03 00000000000000 0000000000000000",
            "3 0"),
        row(
            "variant string case: pointer in the f64/i32 joined slot",
            FLOAT_OR_STRING,
            WitVariant.of(1, "z"),
            "01 00000000000000 20000000 01000000 7a",
            "1 10 1"),
        row(
            "variant f64 case pads the string length slot",
            FLOAT_OR_STRING,
            WitVariant.of(0, 2.0),
            "00 00000000000000 0000000000000040",
            "0 4000000000000000 0"),
        row(
            "list<option<u64>>",
            WitType.list(OPT_U64),
            List.of(Optional.of(1L), Optional.empty()),
            "18000000 02000000 01 00000000000000 0100000000000000 00 00000000000000"
                + " 0000000000000000",
            "10 2"),
        row(
            "empty list<tuple<string, string>>",
            WitType.list(WitType.tuple(Primitive.STRING, Primitive.STRING)),
            List.of(),
            "18000000 00000000",
            "10 0"),
        row(
            "option<option<bool>> some(none)",
            WitType.option(WitType.option(Primitive.BOOL)),
            Optional.of(Optional.empty()),
            "01 00 00",
            "1 0 0"));
  }

  static Arguments row(String name, WitType type, Object value, String image, String flat) {
    return Arguments.of(name, type, value, image.replace(" ", ""), flat);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void storesTheSpecifiedImageAndLoadsItBack(
      String name, WitType type, Object value, String image, String flat) {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(MEMORY);
    CanonicalAbi abi = new CanonicalAbi(memory);

    int ptr = abi.storeNew(type, value);

    int base = ByteArrayGuestMemory.HEAP_BASE;
    assertEquals(image, memory.hex(base, memory.top() - base), "memory image");
    assertEquals(
        AbiValues.comparable(value), AbiValues.comparable(abi.load(type, ptr)), "loaded back");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void lowersToTheSpecifiedFlatValuesAndLiftsThemBack(
      String name, WitType type, Object value, String image, String flat) {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(MEMORY);
    CanonicalAbi abi = new CanonicalAbi(memory);

    long[] values = abi.lowerFlat(type, value);

    assertEquals(flat, AbiValues.flat(values), "flat values");
    assertEquals(type.flat().size(), values.length, "one value per flat type");
    assertEquals(
        AbiValues.comparable(value),
        AbiValues.comparable(abi.liftFlat(type, values)),
        "lifted back");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void liftsTheSameValueFromAnImageWrittenByHand(
      String name, WitType type, Object value, String image, String flat) {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(MEMORY);
    memory.write(ByteArrayGuestMemory.HEAP_BASE, image);

    Object lifted = new CanonicalAbi(memory).load(type, ByteArrayGuestMemory.HEAP_BASE);

    assertEquals(AbiValues.comparable(value), AbiValues.comparable(lifted));
  }
}
