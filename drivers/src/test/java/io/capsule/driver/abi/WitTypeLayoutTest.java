package io.capsule.driver.abi;

import static io.capsule.driver.abi.WitType.field;
import static io.capsule.driver.abi.WitType.payloadCase;
import static io.capsule.driver.abi.WitType.unitCase;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Size, alignment and flattening per CanonicalABI.md, one row per type. */
class WitTypeLayoutTest {

  static Stream<Arguments> rows() {
    return Stream.of(
        row(Primitive.BOOL, 1, 1, "i32"),
        row(Primitive.U8, 1, 1, "i32"),
        row(Primitive.S32, 4, 4, "i32"),
        row(Primitive.U32, 4, 4, "i32"),
        row(Primitive.U64, 8, 8, "i64"),
        row(Primitive.F64, 8, 8, "f64"),
        row(Primitive.STRING, 8, 4, "i32 i32"),
        row(WitType.list(Primitive.U8), 8, 4, "i32 i32"),
        row(WitType.list(Primitive.U64), 8, 4, "i32 i32"),
        row(WitType.option(Primitive.BOOL), 2, 1, "i32 i32"),
        row(WitType.option(Primitive.S32), 8, 4, "i32 i32"),
        row(WitType.option(Primitive.U64), 16, 8, "i32 i64"),
        row(WitType.option(Primitive.F64), 16, 8, "i32 f64"),
        row(WitType.option(Primitive.STRING), 12, 4, "i32 i32 i32"),
        row(
            WitType.result(Optional.of(Primitive.STRING), Optional.of(Primitive.STRING)),
            12,
            4,
            "i32 i32 i32"),
        row(WitType.result(Optional.empty(), Optional.empty()), 1, 1, "i32"),
        row(WitType.result(Optional.of(Primitive.U64), Optional.empty()), 16, 8, "i32 i64"),
        row(WitType.enumOf("e", "a", "b", "c"), 1, 1, "i32"),
        row(enumOf(256), 1, 1, "i32"),
        row(enumOf(257), 2, 2, "i32"),
        row(enumOf(65536), 2, 2, "i32"),
        row(enumOf(65537), 4, 4, "i32"),
        row(
            WitType.record(
                "r",
                field("a", Primitive.BOOL),
                field("b", Primitive.U64),
                field("c", Primitive.BOOL)),
            24,
            8,
            "i32 i64 i32"),
        row(WitType.record("empty"), 0, 1, ""),
        row(WitType.tuple(Primitive.STRING, Primitive.STRING), 16, 4, "i32 i32 i32 i32"),
        row(WitType.tuple(Primitive.BOOL, Primitive.S32), 8, 4, "i32 i32"),
        row(
            WitType.variant(
                "v",
                payloadCase("a", Primitive.U64),
                payloadCase("b", Primitive.F64),
                payloadCase("c", Primitive.S32),
                unitCase("d")),
            16,
            8,
            "i32 i64"),
        row(
            WitType.variant(
                "w", payloadCase("a", Primitive.F64), payloadCase("b", Primitive.STRING)),
            16,
            8,
            "i32 i64 i32"),
        row(WitType.variant("u", unitCase("x"), unitCase("y")), 1, 1, "i32"),
        row(
            WitType.variant(
                "s", payloadCase("a", Primitive.S32), payloadCase("b", Primitive.STRING)),
            12,
            4,
            "i32 i32 i32"));
  }

  static EnumType enumOf(int cases) {
    return new EnumType("e" + cases, IntStream.range(0, cases).mapToObj(i -> "c" + i).toList());
  }

  static Arguments row(WitType type, int size, int alignment, String flat) {
    return Arguments.of(type, size, alignment, flat);
  }

  @ParameterizedTest(name = "{0}: size {1}, align {2}, flat [{3}]")
  @MethodSource("rows")
  void hasTheCanonicalLayout(WitType type, int size, int alignment, String flat) {
    assertEquals(size, type.size(), "size");
    assertEquals(alignment, type.alignment(), "alignment");
    assertEquals(
        flat,
        type.flat().stream().map(f -> f.name().toLowerCase()).collect(Collectors.joining(" ")),
        "flat");
  }
}
