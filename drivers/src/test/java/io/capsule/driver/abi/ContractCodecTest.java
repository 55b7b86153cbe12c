package io.capsule.driver.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.QuotaState;
import io.capsule.driver.api.SessionMode;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The contract in the ABI model: its layout facts and every conversion, round-tripped. */
class ContractCodecTest {

  static Stream<Arguments> enums() {
    return Stream.of(
        Arguments.of(ContractTypes.INTERRUPT_METHOD, witNames(InterruptMethod.values())),
        Arguments.of(ContractTypes.PATH_ACCESS, witNames(PathAccess.values())),
        Arguments.of(ContractTypes.SESSION_MODE, witNames(SessionMode.values())),
        Arguments.of(ContractTypes.FAILURE_KIND, witNames(FailureKind.values())),
        Arguments.of(ContractTypes.QUOTA_STATE, witNames(QuotaState.values())));
  }

  static List<String> witNames(Enum<?>[] values) {
    return Arrays.stream(values)
        .map(
            v -> {
              try {
                return (String) v.getClass().getMethod("witName").invoke(v);
              } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
              }
            })
        .toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("enums")
  void javaEnumOrdinalsAreTheWitCaseOrder(EnumType type, List<String> javaWitNames) {
    assertEquals(type.names(), javaWitNames);
  }

  @Test
  void eventCaseOrderIsTheWitCaseOrder() {
    List<String> witCases =
        ContractTypes.EVENT.caseList().stream().map(VariantType.Case::name).toList();
    List<String> javaCases = ContractSamples.everyEvent().stream().map(Event::witName).toList();
    assertEquals(witCases, javaCases);
  }

  @Test
  void contractLayoutsAreTheOnesTheRustDriversWriteByHand() {
    assertEquals(
        List.of(88, 8), List.of(ContractTypes.EVENT.size(), ContractTypes.EVENT.alignment()));
    assertEquals(80, ContractTypes.USAGE.size());
    assertEquals(64, ContractTypes.QUOTA_WINDOW.size());
    assertEquals(76, ContractTypes.DESCRIPTION.size());
    assertEquals(4, ContractTypes.DESCRIPTION.alignment());
    assertEquals(48, ContractTypes.DESCRIPTION.offset(8), "login-check offset");
    assertEquals(100, ContractTypes.LAUNCH_REQUEST.size());
    assertEquals(56, ContractTypes.LAUNCH_RESULT.size());
    assertEquals(12, ContractTypes.LOGIN_STATE.size());
    assertEquals(
        List.of(0, 8, 24, 40, 56),
        List.of(0, 1, 2, 3, 4).stream().map(ContractTypes.QUOTA_WINDOW::offset).toList());
    assertEquals(25, ContractTypes.LAUNCH_REQUEST.flat().size());
    assertEquals(List.of(FlatType.I32), ContractTypes.LAUNCH.coreParams(), "passed by pointer");
    assertEquals(List.of(FlatType.I32, FlatType.I32), ContractTypes.PARSE.coreParams());
    assertEquals(8, ContractTypes.CLASSIFY_EXIT.coreParams().size());
    assertEquals(6, ContractTypes.READ_LOGIN.coreParams().size());
    for (WitFunction f :
        List.of(
            ContractTypes.DESCRIBE,
            ContractTypes.LAUNCH,
            ContractTypes.PARSE,
            ContractTypes.CLASSIFY_EXIT,
            ContractTypes.READ_LOGIN)) {
      assertEquals(List.of(FlatType.I32), f.coreResults(), f.name() + " returns a pointer");
    }
    assertEquals(
        "murmur:driver/process@0.6.0#classify-exit",
        ContractTypes.coreExport(ContractTypes.CLASSIFY_EXIT));
  }

  static Stream<Event> events() {
    return ContractSamples.everyEvent().stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("events")
  void everyEventRoundTripsThroughGuestMemory(Event event) {
    CanonicalAbi abi = new CanonicalAbi(new ByteArrayGuestMemory(0x10000));

    int ptr = abi.storeNew(ContractTypes.EVENT, EventCodec.value(event));

    assertEquals(event, EventCodec.event(abi.load(ContractTypes.EVENT, ptr)));
  }

  @Test
  void aUsageEventHasTheSpecifiedImage() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x1000);
    Event usage = ContractSamples.everyEvent().get(EventCodec.USAGE);

    int ptr = new CanonicalAbi(memory).storeNew(ContractTypes.EVENT, EventCodec.value(usage));

    String expected =
        "08 00000000000000" // discriminant 8 (usage), payload at 8
            + "01 00000000000000 0c00000000000000" // input some(12)
            + "00 00000000000000 0000000000000000" // output none
            + "01 00000000000000 0000000000000000" // cache-read some(0)
            + "00 00000000000000 0000000000000000" // cache-creation none
            + "01 00000000000000 ffffffffffffffff"; // thinking some(2^64-1)
    assertEquals(expected.replace(" ", ""), memory.hex(ptr, 88));
  }

  @Test
  void aListOfEveryEventRoundTripsAsParseResult() {
    CanonicalAbi abi = new CanonicalAbi(new ByteArrayGuestMemory(0x10000));
    List<Object> values =
        ContractSamples.everyEvent().stream().map(e -> (Object) EventCodec.value(e)).toList();

    int ptr = abi.storeNew(ContractTypes.EVENTS, values);

    assertEquals(
        ContractSamples.everyEvent(), ContractCodec.events(abi.load(ContractTypes.EVENTS, ptr)));
  }

  @Test
  void descriptionRoundTrips() {
    CanonicalAbi abi = new CanonicalAbi(new ByteArrayGuestMemory(0x10000));
    Description d = ContractSamples.description();
    Description unavailable =
        new Description(
            d.harness(),
            d.binary(),
            d.versionArgs(),
            d.testedVersions(),
            InterruptMethod.UNSUPPORTED,
            d.requiredEnv(),
            false,
            false,
            new LoginCheck.Unavailable("no status command"),
            d.harnessNeeds());

    for (Description x : List.of(d, unavailable)) {
      int ptr = abi.storeNew(ContractTypes.DESCRIPTION, ContractCodec.value(x));
      assertEquals(x, ContractCodec.description(abi.load(ContractTypes.DESCRIPTION, ptr)));
    }
  }

  @Test
  void launchRequestRoundTripsThroughTheParameterArea() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x10000);
    CanonicalAbi abi = new CanonicalAbi(memory);

    long[] flat =
        abi.lowerParams(
            ContractTypes.LAUNCH.params(),
            List.of(ContractCodec.value(ContractSamples.launchRequest())));

    assertEquals(1, flat.length, "over 16 flat params: one pointer");
    assertEquals(
        ContractSamples.launchRequest(),
        ContractCodec.launchRequest(abi.load(ContractTypes.LAUNCH_REQUEST, (int) flat[0])));
  }

  @Test
  void launchResultRoundTripsBothCases() {
    CanonicalAbi abi = new CanonicalAbi(new ByteArrayGuestMemory(0x10000));
    for (LaunchResult r :
        List.of(
            new LaunchResult.Planned(ContractSamples.launchPlan()),
            new LaunchResult.Refused("no model"))) {
      int ptr = abi.storeNew(ContractTypes.LAUNCH_RESULT, ContractCodec.value(r));
      assertEquals(r, ContractCodec.launchResult(abi.load(ContractTypes.LAUNCH_RESULT, ptr)));
    }
  }

  @Test
  void exitStatusLowersToEightFlatValues() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x1000);
    CanonicalAbi abi = new CanonicalAbi(memory);
    ExitStatus exit = new ExitStatus(Optional.of(0), Optional.empty(), "tail", false, true);

    long[] flat =
        abi.lowerParams(ContractTypes.CLASSIFY_EXIT.params(), List.of(ContractCodec.value(exit)));

    assertEquals("1 0 0 0 10 4 0 1", AbiValues.flat(flat));
    assertEquals(exit, ContractCodec.exitStatus(abi.liftFlat(ContractTypes.EXIT_STATUS, flat)));
  }

  @Test
  void loginOutputLowersToSixFlatValues() {
    CanonicalAbi abi = new CanonicalAbi(new ByteArrayGuestMemory(0x1000));
    LoginOutput out = new LoginOutput(Optional.empty(), "ok", "");

    long[] flat = abi.lowerFlat(ContractTypes.LOGIN_OUTPUT, ContractCodec.value(out));

    assertEquals("0 0 10 2 12 0", AbiValues.flat(flat));
    assertEquals(out, ContractCodec.loginOutput(abi.liftFlat(ContractTypes.LOGIN_OUTPUT, flat)));
  }

  @Test
  void loginStateRoundTripsEveryCase() {
    CanonicalAbi abi = new CanonicalAbi(new ByteArrayGuestMemory(0x1000));
    for (LoginState s :
        List.of(
            new LoginState.LoggedIn(),
            new LoginState.LoggedOut("run `claude login`"),
            new LoginState.Unknown("unreadable"))) {
      int ptr = abi.storeNew(ContractTypes.LOGIN_STATE, ContractCodec.value(s));
      assertEquals(s, ContractCodec.loginState(abi.load(ContractTypes.LOGIN_STATE, ptr)));
    }
  }

  @Test
  void parseLinesLowerAsAListOfStrings() {
    ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x1000);
    CanonicalAbi abi = new CanonicalAbi(memory);

    long[] flat =
        abi.lowerParams(
            ContractTypes.PARSE.params(), List.of(ContractCodec.value(List.of("{}", ""))));

    assertEquals("10 2", AbiValues.flat(flat));
    assertEquals(List.of("{}", ""), abi.liftFlat(ContractTypes.STRINGS, flat));
  }
}
