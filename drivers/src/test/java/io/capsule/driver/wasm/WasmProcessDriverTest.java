package io.capsule.driver.wasm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.abi.ByteArrayGuestMemory;
import io.capsule.driver.abi.CanonicalAbi;
import io.capsule.driver.abi.ContractCodec;
import io.capsule.driver.abi.ContractSamples;
import io.capsule.driver.abi.ContractTypes;
import io.capsule.driver.abi.EventCodec;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.TurnFailure;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link WasmProcessDriver} over a Java guest: arguments arrive the way the canonical ABI passes
 * them, results are read from the guest's return area, post-return follows every successful lift,
 * and every failure is {@code E-RUN-034} naming the function.
 */
class WasmProcessDriverTest {
  static final String PREFIX = "murmur:driver/process@0.6.0#";

  final ByteArrayGuestMemory memory = new ByteArrayGuestMemory(0x10000);
  final CanonicalAbi guest = new CanonicalAbi(memory);
  final FakeGuestInstance instance = new FakeGuestInstance(memory);
  final WasmProcessDriver driver = new WasmProcessDriver(instance);

  static long[] pointer(int ptr) {
    return new long[] {Integer.toUnsignedLong(ptr)};
  }

  FakeGuestInstance withPostReturn(String function) {
    return instance.export("cabi_post_" + PREFIX + function, args -> new long[0]);
  }

  @Test
  void describeLiftsTheDescriptionFromTheReturnPointerThenCallsPostReturn() {
    int[] returned = new int[1];
    instance.export(
        PREFIX + "describe",
        args -> {
          assertEquals(0, args.length);
          returned[0] =
              guest.storeNew(
                  ContractTypes.DESCRIPTION, ContractCodec.value(ContractSamples.description()));
          return pointer(returned[0]);
        });
    withPostReturn("describe");

    assertEquals(ContractSamples.description(), driver.describe());
    assertEquals(
        List.of(PREFIX + "describe", "cabi_post_" + PREFIX + "describe"), instance.calledExports());
    assertArrayEquals(pointer(returned[0]), instance.calls().get(1).args());
  }

  @Test
  void launchPassesTheRequestByPointerAndLiftsBothResultCases() {
    List<LaunchResult> answers =
        List.of(
            new LaunchResult.Planned(ContractSamples.launchPlan()),
            new LaunchResult.Refused("no such model"));
    int[] turn = new int[1];
    instance.export(
        PREFIX + "launch",
        args -> {
          assertEquals(1, args.length, "25 flat params: passed in memory");
          assertEquals(
              ContractSamples.launchRequest(),
              ContractCodec.launchRequest(guest.load(ContractTypes.LAUNCH_REQUEST, (int) args[0])));
          return pointer(
              guest.storeNew(
                  ContractTypes.LAUNCH_RESULT, ContractCodec.value(answers.get(turn[0]++))));
        });

    assertEquals(answers.get(0), driver.launch(ContractSamples.launchRequest()));
    assertEquals(answers.get(1), driver.launch(ContractSamples.launchRequest()));
    assertEquals(List.of(PREFIX + "launch", PREFIX + "launch"), instance.calledExports());
  }

  @Test
  void parseLowersTheLinesAndLiftsEventsFromAHandWrittenImage() {
    instance.export(
        PREFIX + "parse",
        args -> {
          assertEquals(
              List.of("{\"a\":1}", ""), guest.liftFlat(ContractTypes.PARSE.params().get(0), args));
          // Return area at 0x8000: list{ptr 0x8010, len 1}; one 88-byte event at 0x8010:
          // discriminant 1 (text-delta), string{ptr 0x8100, len 2} at payload offset 8.
          memory.write(0x8000, "10800000 01000000");
          memory.write(0x8010, "01 00000000000000 00810000 02000000");
          memory.write(0x8100, "6869");
          return pointer(0x8000);
        });
    withPostReturn("parse");

    assertEquals(List.of(new Event.TextDelta("hi")), driver.parse(List.of("{\"a\":1}", "")));
    assertArrayEquals(pointer(0x8000), instance.calls().get(1).args());
  }

  @Test
  void parseLiftsEveryEventCase() {
    instance.export(
        PREFIX + "parse",
        args ->
            pointer(
                guest.storeNew(
                    ContractTypes.EVENTS,
                    ContractSamples.everyEvent().stream()
                        .map(e -> (Object) EventCodec.value(e))
                        .toList())));

    assertEquals(ContractSamples.everyEvent(), driver.parse(List.of()));
  }

  @Test
  void classifyExitPassesEightFlatValuesAndReturnsTheTerminalEvent() {
    Event canceled = new Event.TurnFailed(new TurnFailure(FailureKind.CANCELED, "interrupted"));
    instance.export(
        PREFIX + "classify-exit",
        args -> {
          assertEquals(8, args.length);
          assertEquals(
              new ExitStatus(Optional.empty(), Optional.of(2), "bye", true, false),
              ContractCodec.exitStatus(guest.liftFlat(ContractTypes.EXIT_STATUS, args)));
          return pointer(guest.storeNew(ContractTypes.EVENT, EventCodec.value(canceled)));
        });

    assertEquals(
        canceled,
        driver.classifyExit(new ExitStatus(Optional.empty(), Optional.of(2), "bye", true, false)));
  }

  @Test
  void classifyExitReturningANonTerminalEventIsADriverFailure() {
    instance.export(
        PREFIX + "classify-exit",
        args ->
            pointer(guest.storeNew(ContractTypes.EVENT, EventCodec.value(new Event.Note("?")))));

    DriverException e =
        assertThrows(
            DriverException.class,
            () ->
                driver.classifyExit(
                    new ExitStatus(Optional.of(0), Optional.empty(), "", false, false)));

    assertEquals(Code.E_RUN_034, e.code());
    assertTrue(e.getMessage().contains("driver failed in classify-exit: it returned `note`"));
    assertEquals("classify-exit", e.diagnostic().details().get("function"));
  }

  @Test
  void readLoginPassesSixFlatValuesAndLiftsTheState() {
    instance.export(
        PREFIX + "read-login",
        args -> {
          assertEquals(6, args.length);
          LoginOutput out =
              ContractCodec.loginOutput(guest.liftFlat(ContractTypes.LOGIN_OUTPUT, args));
          return pointer(
              guest.storeNew(
                  ContractTypes.LOGIN_STATE,
                  ContractCodec.value(new LoginState.LoggedOut("stdout was " + out.stdout()))));
        });

    assertEquals(
        new LoginState.LoggedOut("stdout was nope"),
        driver.readLogin(new LoginOutput(Optional.of(1), "nope", "")));
    assertEquals(List.of(PREFIX + "read-login"), instance.calledExports(), "no post-return export");
  }

  @Test
  void anOutOfBoundsReturnPointerIsAnAbiViolationNamingTheFunction() {
    instance.export(PREFIX + "parse", args -> pointer(0xfffffff0));
    withPostReturn("parse");

    AbiViolation e = assertThrows(AbiViolation.class, () -> driver.parse(List.of("x")));

    assertEquals(Code.E_RUN_034, e.code());
    assertTrue(
        e.getMessage().startsWith("E-RUN-034 driver failed in parse: list<event> at 0xfffffff0"),
        e.getMessage());
    assertEquals("parse", e.diagnostic().details().get("function"));
    assertEquals(
        List.of(PREFIX + "parse"), instance.calledExports(), "no post-return after a failed lift");
  }

  @Test
  void invalidUtf8InAnEventIsAnAbiViolationNamingTheFunction() {
    instance.export(
        PREFIX + "parse",
        args -> {
          memory.write(0x8000, "10800000 01000000");
          memory.write(0x8010, "0b 00000000000000 00810000 01000000"); // note, 1 byte
          memory.write(0x8100, "ff");
          return pointer(0x8000);
        });

    AbiViolation e = assertThrows(AbiViolation.class, () -> driver.parse(List.of()));

    assertTrue(e.getMessage().endsWith("(at result[0].note)"), e.getMessage());
    assertEquals("[0].note", e.diagnostic().details().get("path"));

    assertTrue(
        e.getMessage()
            .contains("driver failed in parse: string at 0x8100 (1 bytes) is not valid UTF-8"),
        e.getMessage());
  }

  @Test
  void aBadDiscriminantIsAnAbiViolation() {
    instance.export(
        PREFIX + "read-login",
        args -> {
          memory.write(0x8000, "03");
          return pointer(0x8000);
        });

    AbiViolation e =
        assertThrows(
            AbiViolation.class, () -> driver.readLogin(new LoginOutput(Optional.empty(), "", "")));

    assertTrue(
        e.getMessage()
            .contains("driver failed in read-login: login-state at 0x8000 has discriminant 3"),
        e.getMessage());
  }

  @Test
  void aTrapStaysADriverTrapAndNamesTheFunction() {
    DriverTrap trap =
        new DriverTrap(
            Diagnostic.of(Code.E_RUN_034, "wasm trap: unreachable"), new RuntimeException("x"));
    instance.export(
        PREFIX + "launch",
        args -> {
          throw trap;
        });

    DriverTrap e =
        assertThrows(DriverTrap.class, () -> driver.launch(ContractSamples.launchRequest()));

    assertEquals("E-RUN-034 driver failed in launch: wasm trap: unreachable", e.getMessage());
    assertEquals("launch", e.diagnostic().details().get("function"));
    assertEquals(trap, e.getCause());
  }

  @Test
  void anythingElseEscapingTheEngineIsADriverTrap() {
    instance.export(
        PREFIX + "describe",
        args -> {
          throw new IllegalStateException("native crash");
        });

    DriverTrap e = assertThrows(DriverTrap.class, driver::describe);

    assertEquals(Code.E_RUN_034, e.code());
    assertTrue(
        e.getMessage().contains("driver failed in describe: the engine failed"), e.getMessage());
  }

  @Test
  void theWrongNumberOfCoreResultsIsAnAbiViolation() {
    instance.export(PREFIX + "describe", args -> new long[] {16, 8});

    AbiViolation e = assertThrows(AbiViolation.class, driver::describe);

    assertTrue(
        e.getMessage().contains("returned 2 core values; its signature has 1"), e.getMessage());
  }

  @Test
  void closeClosesTheInstance() {
    assertFalse(instance.closed());

    driver.close();

    assertTrue(instance.closed());
  }

  @Test
  void theLinesAreAllocatedThroughTheGuestsRealloc() {
    instance.export(
        PREFIX + "parse", args -> pointer(guest.storeNew(ContractTypes.EVENTS, List.of())));

    driver.parse(List.of("abc"));

    assertEquals(
        List.of(
            new ByteArrayGuestMemory.Realloc(0, 0, 4, 8, 16),
            new ByteArrayGuestMemory.Realloc(0, 0, 1, 3, 24)),
        memory.reallocs().subList(0, 2),
        "the list's element area, then the line's bytes");
    assertEquals("1800000003000000" + "616263", memory.hex(16, 11));
    assertArrayEquals(new long[] {16, 1}, instance.calls().get(0).args());
  }
}
