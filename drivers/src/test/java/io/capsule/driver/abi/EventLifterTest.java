package io.capsule.driver.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.QuotaState;
import io.capsule.driver.api.QuotaWindow;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link EventLifter} against the generic lifter (the oracle) on results a guest could return:
 * every event case, and malformed images made by changing bytes of a valid one. On each, what
 * {@link ParseCall} lifts (the specialised lifter, the generic one where it gives up) must be the
 * generic lifter's outcome: the same events, or the same refusal with the same message and path;
 * and the specialised lifter alone must never accept what the generic one refuses.
 */
class EventLifterTest {

  private static final int MEMORY = 64 * 1024;

  /** A memory holding {@code events} lowered as {@code parse}'s result; its return area. */
  private record Image(ByteArrayGuestMemory memory, int retArea) {}

  private static Image image(List<Event> events) {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(MEMORY);
    int retArea =
        new CanonicalAbi(memory)
            .storeNew(ContractTypes.EVENTS, events.stream().map(EventCodec::value).toList());
    return new Image(memory, retArea);
  }

  private static List<Event> richEvents() {
    List<Event> events = new ArrayList<>(ContractSamples.everyEvent());
    events.add(new Event.Text("non-ASCII: ü ✓ 𝄞"));
    events.add(
        new Event.Quota(
            List.of(
                new QuotaWindow(
                    "nan",
                    Optional.of(Double.NaN),
                    Optional.of(Long.MIN_VALUE),
                    Optional.of(-1L),
                    Optional.of(QuotaState.EXHAUSTED)))));
    events.add(new Event.TextDelta(""));
    return List.copyOf(events);
  }

  /** The generic outcome; what ParseCall lifts must equal it, and the lifter alone must agree. */
  private static EventLifts.Outcome assertSameAsGeneric(ByteArrayGuestMemory memory, int retArea) {
    EventLifts.Outcome generic = EventLifts.generic(memory, retArea);
    assertEquals(generic, EventLifts.asParseCallLifts(memory, retArea));
    List<Event> alone = EventLifts.specialisedAlone(memory, retArea);
    if (generic.refusal() != null) {
      assertNull(alone, () -> "accepted what the generic lifter refuses: " + generic.refusal());
    } else if (alone != null) {
      assertEquals(generic.events(), alone);
    }
    return generic;
  }

  @Test
  void everyEventCaseLiftsToTheSameEventsAsTheGenericLifterWithoutGivingUp() {
    List<Event> events = richEvents();
    Image image = image(events);
    assertEquals(events, EventLifts.generic(image.memory(), image.retArea()).events());
    List<Event> alone = EventLifts.specialisedAlone(image.memory(), image.retArea());
    assertNotNull(alone, "gave up on a valid result");
    assertEquals(events, alone);
  }

  @Test
  void anEmptyListLiftsToNoEvents() {
    Image image = image(List.of());
    assertEquals(List.of(), EventLifts.specialisedAlone(image.memory(), image.retArea()));
  }

  @Test
  void everySingleByteChangeOfAValidResultLiftsAsTheGenericLifterLiftsIt() {
    Image image = image(richEvents());
    ByteArrayGuestMemory memory = image.memory();
    int[] values = {0x00, 0x01, 0x02, 0x07, 0x0f, 0x10, 0x11, 0x7f, 0x80, 0xc3, 0xed, 0xfe, 0xff};
    int refused = 0;
    int accepted = 0;
    for (int at = ByteArrayGuestMemory.HEAP_BASE; at < memory.top(); at++) {
      byte original = memory.loadU8(at);
      for (int v : values) {
        if ((byte) v == original) {
          continue;
        }
        memory.storeU8(at, (byte) v);
        if (assertSameAsGeneric(memory, image.retArea()).refusal() != null) {
          refused++;
        } else {
          accepted++;
        }
      }
      memory.storeU8(at, original);
    }
    // the changes reach every kind of refusal and many harmless edits alike
    assertTrue(refused > 1000, "refused " + refused);
    assertTrue(accepted > 1000, "accepted " + accepted);
  }

  @Test
  void randomMultiByteChangesLiftAsTheGenericLifterLiftsThem() {
    Image image = image(richEvents());
    ByteArrayGuestMemory memory = image.memory();
    int from = ByteArrayGuestMemory.HEAP_BASE;
    int to = memory.top();
    byte[] clean = memory.loadBytes(0, to);
    Random random = new Random(15);
    for (int round = 0; round < 3000; round++) {
      int changes = 1 + random.nextInt(4);
      for (int c = 0; c < changes; c++) {
        memory.storeU8(from + random.nextInt(to - from), (byte) random.nextInt(256));
      }
      assertSameAsGeneric(memory, image.retArea());
      memory.storeBytes(0, clean);
    }
  }

  static Stream<Arguments> malformed() {
    return Stream.of(
        Arguments.of("a misaligned return area", (Edit) (m, ret) -> ret + 2),
        Arguments.of("a return area past the end", (Edit) (m, ret) -> MEMORY - 4),
        Arguments.of(
            "a misaligned list", (Edit) (m, ret) -> at(ret, () -> m.storeI32(ret, 0x1004))),
        Arguments.of(
            "a list past the end", (Edit) (m, ret) -> at(ret, () -> m.storeI32(ret + 4, 0x1000))),
        Arguments.of(
            "a list whose byte length overflows 32 bits",
            (Edit) (m, ret) -> at(ret, () -> m.storeI32(ret + 4, 0x2000_0000))),
        Arguments.of(
            "an event discriminant of 16",
            (Edit) (m, ret) -> at(ret, () -> m.storeU8(m.loadI32(ret), (byte) 16))),
        Arguments.of(
            "a string past the end",
            (Edit) (m, ret) -> at(ret, () -> m.storeI32(m.loadI32(ret) + 8, MEMORY - 1))),
        Arguments.of(
            "invalid UTF-8",
            (Edit)
                (m, ret) -> at(ret, () -> m.storeU8(m.loadI32(m.loadI32(ret) + 8), (byte) 0xc3))));
  }

  private static int at(int retArea, Runnable change) {
    change.run();
    return retArea;
  }

  /** Changes a valid one-event image ({@code text-delta "hello"}); returns the return area. */
  @FunctionalInterface
  interface Edit {
    int apply(ByteArrayGuestMemory memory, int retArea);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void aMalformedResultIsRefusedWithTheGenericLiftersMessageAndPath(String name, Edit edit) {
    Image image = image(List.of(new Event.TextDelta("hello")));
    int retArea = edit.apply(image.memory(), image.retArea());
    EventLifts.Outcome outcome = assertSameAsGeneric(image.memory(), retArea);
    assertNotNull(outcome.refusal(), name + " was not refused");
  }

  @Test
  void stringsThatOverlapPastTheMemorysSizeAreRefusedAsTheGenericLifterRefusesThem() {
    // a 30 000-byte string, then three text events pointing at it: 90 000 bytes from 64 KiB
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(MEMORY);
    byte[] text = "x".repeat(30_000).getBytes(StandardCharsets.US_ASCII);
    int string = 0x100;
    memory.storeBytes(string, text);
    int list = 0x8000;
    int size = ContractTypes.EVENT.size();
    IntStream.range(0, 3)
        .forEach(
            i -> {
              int at = list + i * size;
              memory.storeU8(at, (byte) EventCodec.TEXT);
              memory.storeI32(at + ContractTypes.EVENT.cases().payloadOffset(), string);
              memory.storeI32(at + ContractTypes.EVENT.cases().payloadOffset() + 4, text.length);
            });
    int retArea = 0x10;
    memory.storeI32(retArea, list);
    memory.storeI32(retArea + 4, 3);
    EventLifts.Outcome outcome = assertSameAsGeneric(memory, retArea);
    assertTrue(outcome.refusal().contains("overlap"), outcome.refusal());
    assertEquals("[2].text", outcome.details().get("path"));
    // two of them fit: accepted, by both
    memory.storeI32(retArea + 4, 2);
    assertEquals(2, EventLifts.specialisedAlone(memory, retArea).size());
  }

  @Test
  void aStringIsAsciiUnlessSomeByteOfItHasTheHighBitWhereverThatByteIs() {
    for (int n = 0; n <= 40; n++) {
      byte[] bytes = new byte[n + 3];
      Arrays.fill(bytes, (byte) 'a');
      bytes[n] = (byte) 0xc3; // past the end: never looked at
      assertTrue(EventLifter.ascii(bytes, n), "all ASCII, length " + n);
      for (int at = 0; at < n; at++) {
        for (byte high : new byte[] {(byte) 0x80, (byte) 0xc3, (byte) 0xff}) {
          byte[] one = bytes.clone();
          one[at] = high;
          assertFalse(EventLifter.ascii(one, n), "byte " + at + " of " + n);
        }
      }
    }
  }
}
