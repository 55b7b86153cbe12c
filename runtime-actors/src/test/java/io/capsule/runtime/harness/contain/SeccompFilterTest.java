package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.runtime.harness.contain.SeccompFilter.Arch;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The filter's rules, run through a classic-BPF interpreter (pure). See {@link SeccompFilter}. */
class SeccompFilterTest {

  static final int ALLOW = SeccompFilter.RET_ALLOW;
  static final int EPERM = SeccompFilter.RET_ERRNO | SeccompFilter.EPERM;
  static final int ENOSYS = SeccompFilter.RET_ERRNO | SeccompFilter.ENOSYS;

  static final int AUDIT_ARCH_I386 = 0x40000003;
  static final int AUDIT_ARCH_ARM = 0x40000028;

  /**
   * Calls the filter never names, for the rows that must pass: {name, x86_64, aarch64}. Checked
   * against libseccomp with the table in {@code SyscallTableTest}.
   */
  static final List<SyscallTable.Syscall> ORDINARY =
      List.of(
          new SyscallTable.Syscall("read", 0, 63),
          new SyscallTable.Syscall("write", 1, 64),
          new SyscallTable.Syscall("openat", 257, 56),
          new SyscallTable.Syscall("close", 3, 57),
          new SyscallTable.Syscall("mmap", 9, 222),
          new SyscallTable.Syscall("execve", 59, 221),
          new SyscallTable.Syscall("wait4", 61, 260),
          new SyscallTable.Syscall("kill", 62, 129),
          new SyscallTable.Syscall("getpid", 39, 172),
          new SyscallTable.Syscall("connect", 42, 203),
          new SyscallTable.Syscall("bind", 49, 200),
          new SyscallTable.Syscall("prctl", 157, 167),
          new SyscallTable.Syscall("seccomp", 317, 277),
          new SyscallTable.Syscall("exit_group", 231, 94));

  static int nr(Arch arch, String name) {
    Optional<SyscallTable.Syscall> ordinary =
        ORDINARY.stream().filter(s -> s.name().equals(name)).findFirst();
    return ordinary
        .map(s -> s.number(arch))
        .orElseGet(() -> SyscallTable.number(arch, name).orElseThrow());
  }

  private static int verdict(Arch arch, String name, long... args) {
    return new BpfInterpreter(SeccompFilter.program(arch))
        .run(arch.auditArch, nr(arch, name), args);
  }

  private static long arg(String hexOrDecimal) {
    return hexOrDecimal.startsWith("0x")
        ? Long.parseUnsignedLong(hexOrDecimal.substring(2), 16)
        : Long.parseLong(hexOrDecimal);
  }

  /** The verdict's name, so that a failing row reads "expected EPERM but was ALLOW". */
  private static String action(int ret) {
    return switch (ret) {
      case ALLOW -> "ALLOW";
      case EPERM -> "EPERM";
      case ENOSYS -> "ENOSYS";
      default -> String.format("0x%08x", ret);
    };
  }

  @ParameterizedTest(name = "{0} {1}({2}, {3}) -> {4}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # arch   | call        | arg0               | arg1               | verdict
          # clone3's flags are behind a pointer: ENOSYS, and the C library falls back to clone.
          both     | clone3      | 0                  | 88                 | ENOSYS
          # clone: any new namespace is refused; fork and thread creation pass.
          both     | clone       | 0x10000011         | 0                  | EPERM
          both     | clone       | 0x00020011         | 0                  | EPERM
          both     | clone       | 0x40000011         | 0                  | EPERM
          both     | clone       | 0x20000011         | 0                  | EPERM
          both     | clone       | 0x08000011         | 0                  | EPERM
          both     | clone       | 0x04000011         | 0                  | EPERM
          both     | clone       | 0x02000011         | 0                  | EPERM
          both     | clone       | 0x01200011         | 0                  | ALLOW
          both     | clone       | 0x003d0f00         | 0                  | ALLOW
          # The kernel reads clone's flags as 32 bits: a high half set changes nothing.
          both     | clone       | 0xffffffff00000011 | 0                  | ALLOW
          both     | clone       | 0xffffffff10000011 | 0                  | EPERM
          # unshare: the same, plus CLONE_NEWTIME; unsharing files or fs state passes.
          both     | unshare     | 0x10000000         | 0                  | EPERM
          both     | unshare     | 0x00020000         | 0                  | EPERM
          both     | unshare     | 0x40000000         | 0                  | EPERM
          both     | unshare     | 0x00000080         | 0                  | EPERM
          both     | unshare     | 0x00000400         | 0                  | ALLOW
          both     | unshare     | 0x00000200         | 0                  | ALLOW
          # ioctl: typing into the terminal is refused, whatever the high half of the request.
          both     | ioctl       | 0                  | 0x5412             | EPERM
          both     | ioctl       | 0                  | 0x541C             | EPERM
          both     | ioctl       | 0                  | 0xffffffff00005412 | EPERM
          both     | ioctl       | 0                  | 0x5401             | ALLOW
          both     | ioctl       | 0                  | 0x5413             | ALLOW
          both     | ioctl       | 0                  | 0x541B             | ALLOW
          # socket(domain, type): netlink, packet, raw, and families beyond unix/inet/inet6.
          both     | socket      | 16                 | 3                  | EPERM
          both     | socket      | 16                 | 2                  | EPERM
          both     | socket      | 17                 | 2                  | EPERM
          both     | socket      | 17                 | 3                  | EPERM
          both     | socket      | 2                  | 3                  | EPERM
          both     | socket      | 10                 | 3                  | EPERM
          both     | socket      | 2                  | 0x80803            | EPERM
          both     | socket      | 2                  | 10                 | EPERM
          both     | socket      | 38                 | 5                  | EPERM
          both     | socket      | 40                 | 1                  | EPERM
          both     | socket      | 1                  | 1                  | ALLOW
          both     | socket      | 1                  | 2                  | ALLOW
          both     | socket      | 1                  | 5                  | ALLOW
          both     | socket      | 1                  | 0x80001            | ALLOW
          both     | socket      | 2                  | 1                  | ALLOW
          both     | socket      | 2                  | 0x801              | ALLOW
          both     | socket      | 2                  | 2                  | ALLOW
          both     | socket      | 10                 | 1                  | ALLOW
          both     | socket      | 10                 | 2                  | ALLOW
          both     | socketpair  | 1                  | 1                  | ALLOW
          both     | socketpair  | 16                 | 2                  | EPERM
          both     | socketpair  | 1                  | 3                  | EPERM
          # personality: the plain personas and the query pass; unsafe flags are refused.
          both     | personality | 0xffffffff         | 0                  | ALLOW
          both     | personality | 0                  | 0                  | ALLOW
          both     | personality | 0x8                | 0                  | ALLOW
          both     | personality | 0x0040000          | 0                  | EPERM
          both     | personality | 0x0400000          | 0                  | EPERM
          # What node, sh, socat, git and python do all day.
          both     | read        | 0                  | 0                  | ALLOW
          both     | write       | 1                  | 0                  | ALLOW
          both     | openat      | 0xffffff9c         | 0                  | ALLOW
          both     | close       | 3                  | 0                  | ALLOW
          both     | mmap        | 0                  | 4096               | ALLOW
          both     | execve      | 0                  | 0                  | ALLOW
          both     | wait4       | 0xffffffff         | 0                  | ALLOW
          both     | kill        | 1                  | 15                 | ALLOW
          both     | getpid      | 0                  | 0                  | ALLOW
          both     | connect     | 3                  | 0                  | ALLOW
          both     | bind        | 3                  | 0                  | ALLOW
          both     | prctl       | 38                 | 1                  | ALLOW
          both     | seccomp     | 1                  | 0                  | ALLOW
          both     | exit_group  | 0                  | 0                  | ALLOW
          """)
  void answersEachCallAsTheRulesSay(
      String arches, String call, String arg0, String arg1, String expected) {
    List<Arch> on = arches.equals("both") ? List.of(Arch.values()) : List.of(Arch.valueOf(arches));
    for (Arch arch : on) {
      assertEquals(
          expected,
          action(verdict(arch, call, arg(arg0), arg(arg1), 0, 0, 0, 0)),
          () -> arch + " " + call + "(" + arg0 + ", " + arg1 + ")");
    }
  }

  static Stream<Arguments> refusedCalls() {
    return Arrays.stream(Arch.values())
        .flatMap(
            arch ->
                SeccompFilter.REFUSED.stream()
                    .filter(name -> SyscallTable.number(arch, name).isPresent())
                    .map(name -> Arguments.of(arch, name)));
  }

  @ParameterizedTest(name = "{0} {1} -> EPERM")
  @MethodSource("refusedCalls")
  void refusesEveryListedCallWhateverItsArguments(Arch arch, String name) {
    assertEquals("EPERM", action(verdict(arch, name, 0, 0, 0, 0, 0, 0)));
    assertEquals("EPERM", action(verdict(arch, name, -1, -1, -1, -1, -1, -1)));
  }

  @Test
  void onlyX86OnlyCallsAreMissingOnAarch64() {
    List<String> missing =
        SeccompFilter.REFUSED.stream()
            .filter(name -> SyscallTable.number(Arch.AARCH64, name).isEmpty())
            .toList();
    assertEquals(
        List.of(
            "ioperm",
            "iopl",
            "uselib",
            "create_module",
            "get_kernel_syms",
            "query_module",
            "_sysctl",
            "sysfs",
            "ustat"),
        missing);
  }

  @ParameterizedTest(name = "{0} program, audit arch {1}, nr {2} -> {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # program | audit arch | nr         | verdict
          # i386 through int 0x80 on x86_64: getpid, read, socketcall — all refused.
          X86_64    | 0x40000003 | 20         | EPERM
          X86_64    | 0x40000003 | 3          | EPERM
          X86_64    | 0x40000003 | 102        | EPERM
          # arm32 on aarch64.
          AARCH64   | 0x40000028 | 20         | EPERM
          AARCH64   | 0x40000028 | 3          | EPERM
          # Each program refuses the other 64-bit ABI (their numbers differ).
          X86_64    | 0xC00000B7 | 63         | EPERM
          AARCH64   | 0xC000003E | 0          | EPERM
          # x32 on x86_64: read, getpid, socket with __X32_SYSCALL_BIT; and nr -1.
          X86_64    | 0xC000003E | 0x40000000 | EPERM
          X86_64    | 0xC000003E | 0x40000027 | EPERM
          X86_64    | 0xC000003E | 0x40000029 | EPERM
          X86_64    | 0xC000003E | 0xffffffff | EPERM
          # The same numbers natively pass.
          X86_64    | 0xC000003E | 0          | ALLOW
          X86_64    | 0xC000003E | 39         | ALLOW
          AARCH64   | 0xC00000B7 | 63         | ALLOW
          """)
  void refusesEveryCallOfAnotherAbi(Arch program, String auditArch, String nr, String expected) {
    assertEquals(
        expected,
        action(
            new BpfInterpreter(SeccompFilter.program(program))
                .run((int) arg(auditArch), (int) arg(nr), 0, 0, 0, 0, 0, 0)));
  }

  @ParameterizedTest
  @EnumSource(Arch.class)
  void theProgramIsOneTheKernelLoads(Arch arch) {
    byte[] program = SeccompFilter.program(arch);
    BpfInterpreter.check(program);
    int length = program.length / BpfAssembler.INSN_BYTES;
    assertTrue(length <= BpfAssembler.MAX_INSNS, length + " instructions");
    assertArrayEquals(program, SeccompFilter.program(arch), "the same bytes every time");
    // The first instruction loads seccomp_data.arch, little-endian: code 0x20, k 4.
    assertArrayEquals(new byte[] {0x20, 0, 0, 0, 4, 0, 0, 0}, Arrays.copyOf(program, 8));
  }

  @Test
  void theArchitecturesAreThoseOfOsArch() {
    assertEquals(Optional.of(Arch.X86_64), Arch.of("amd64"));
    assertEquals(Optional.of(Arch.X86_64), Arch.of("x86_64"));
    assertEquals(Optional.of(Arch.AARCH64), Arch.of("aarch64"));
    assertEquals(Optional.empty(), Arch.of("arm"));
    assertEquals(Optional.empty(), Arch.of("ppc64le"));
    assertEquals(Arch.of(System.getProperty("os.arch")), Arch.host());
  }
}
