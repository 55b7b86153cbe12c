package io.capsule.runtime.harness.contain;

import io.capsule.runtime.harness.contain.SeccompFilter.Arch;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The numbers of the system calls the filter names, per architecture (pure data). x86_64 from the
 * kernel's {@code arch/x86/entry/syscalls/syscall_64.tbl} (the 64-bit ABI: "common" and "64" rows),
 * aarch64 from {@code include/uapi/asm-generic/unistd.h}, which aarch64 uses unchanged. Since 5.1
 * (number 424 on) both share one numbering. aarch64 has no legacy calls such as {@code iopl},
 * {@code uselib} or {@code _sysctl}: {@link #ABSENT} there. {@code SyscallTableTest} checks every
 * row against libseccomp's own tables ({@code scmp_sys_resolver}).
 */
final class SyscallTable {

  /** The call does not exist on that architecture: no rule is emitted for it there. */
  static final int ABSENT = -1;

  /** One call and its number on each architecture. */
  record Syscall(String name, int x86_64, int aarch64) {
    int number(Arch arch) {
      return switch (arch) {
        case X86_64 -> x86_64;
        case AARCH64 -> aarch64;
      };
    }
  }

  static final List<Syscall> ROWS =
      List.of(
          // The mount API, old and new.
          new Syscall("mount", 165, 40),
          new Syscall("umount2", 166, 39),
          new Syscall("pivot_root", 155, 41),
          new Syscall("open_tree", 428, 428),
          new Syscall("move_mount", 429, 429),
          new Syscall("fsopen", 430, 430),
          new Syscall("fsconfig", 431, 431),
          new Syscall("fsmount", 432, 432),
          new Syscall("fspick", 433, 433),
          new Syscall("mount_setattr", 442, 442),
          // Namespaces and processes.
          new Syscall("setns", 308, 268),
          new Syscall("unshare", 272, 97),
          new Syscall("clone", 56, 220),
          new Syscall("clone3", 435, 435),
          new Syscall("ptrace", 101, 117),
          new Syscall("process_vm_readv", 310, 270),
          new Syscall("process_vm_writev", 311, 271),
          new Syscall("pidfd_getfd", 438, 438),
          new Syscall("personality", 135, 92),
          // Kernel facilities with a history of privilege escalations.
          new Syscall("keyctl", 250, 219),
          new Syscall("add_key", 248, 217),
          new Syscall("request_key", 249, 218),
          new Syscall("bpf", 321, 280),
          new Syscall("perf_event_open", 298, 241),
          new Syscall("userfaultfd", 323, 282),
          new Syscall("io_uring_setup", 425, 425),
          new Syscall("io_uring_enter", 426, 426),
          new Syscall("io_uring_register", 427, 427),
          new Syscall("open_by_handle_at", 304, 265),
          new Syscall("name_to_handle_at", 303, 264),
          // The machine's administration.
          new Syscall("kexec_load", 246, 104),
          new Syscall("kexec_file_load", 320, 294),
          new Syscall("init_module", 175, 105),
          new Syscall("finit_module", 313, 273),
          new Syscall("delete_module", 176, 106),
          new Syscall("acct", 163, 89),
          new Syscall("swapon", 167, 224),
          new Syscall("swapoff", 168, 225),
          new Syscall("reboot", 169, 142),
          new Syscall("quotactl", 179, 60),
          new Syscall("quotactl_fd", 443, 443),
          new Syscall("lookup_dcookie", 212, 18),
          new Syscall("settimeofday", 164, 170),
          new Syscall("clock_settime", 227, 112),
          new Syscall("nfsservctl", 180, 42),
          // x86_64 only: port I/O and long-obsolete module and sysctl interfaces.
          new Syscall("ioperm", 173, ABSENT),
          new Syscall("iopl", 172, ABSENT),
          new Syscall("uselib", 134, ABSENT),
          new Syscall("create_module", 174, ABSENT),
          new Syscall("get_kernel_syms", 177, ABSENT),
          new Syscall("query_module", 178, ABSENT),
          new Syscall("_sysctl", 156, ABSENT),
          new Syscall("sysfs", 139, ABSENT),
          new Syscall("ustat", 136, ABSENT),
          // Calls whose arguments the filter inspects.
          new Syscall("ioctl", 16, 29),
          new Syscall("socket", 41, 198),
          new Syscall("socketpair", 53, 199));

  private static final Map<String, Syscall> BY_NAME =
      ROWS.stream().collect(Collectors.toUnmodifiableMap(Syscall::name, Function.identity()));

  private SyscallTable() {}

  /**
   * The number of {@code name} on {@code arch}; empty when the call does not exist there.
   *
   * @throws IllegalArgumentException when the table has no row for {@code name} (a rule names a
   *     call nobody looked up: a bug, not a host condition)
   */
  static OptionalInt number(Arch arch, String name) {
    Syscall row = BY_NAME.get(name);
    if (row == null) {
      throw new IllegalArgumentException("no syscall number for " + name + " in SyscallTable");
    }
    int nr = row.number(arch);
    return nr == ABSENT ? OptionalInt.empty() : OptionalInt.of(nr);
  }
}
