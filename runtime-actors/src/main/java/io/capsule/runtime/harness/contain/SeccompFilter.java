package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The seccomp filter bubblewrap installs in every contained harness and tool ({@code bwrap
 * --seccomp FD}), generated here as a classic-BPF program (pure; no libseccomp). Default: allow.
 * Refused with EPERM (never a kill: a refused call is an error the program can report), in order:
 *
 * <ol>
 *   <li>a call from another ABI than the filter's own ({@code seccomp_data.arch}: i386 through
 *       {@code int 0x80} on x86_64, arm32 on aarch64) — every call, since the numbers below mean
 *       nothing there; on x86_64 also every x32 call (number with bit 30 set);
 *   <li>the calls of {@link #REFUSED}: mounts, namespaces joined, other processes' memory, kernel
 *       keyrings, eBPF, perf, userfaultfd, io_uring, kexec, modules, file handles, the machine's
 *       administration;
 *   <li>{@code clone} and {@code unshare} asking for any new namespace; {@code clone3} answers
 *       ENOSYS instead (its flags are behind a pointer a filter cannot read; the C library then
 *       falls back to {@code clone}, which is checked);
 *   <li>{@code ioctl} TIOCSTI and TIOCLINUX (typing into the terminal);
 *   <li>{@code socket} and {@code socketpair} outside AF_UNIX, AF_INET, AF_INET6, or of type
 *       SOCK_RAW or SOCK_PACKET in any family;
 *   <li>{@code personality} other than the plain Linux personas (no ADDR_NO_RANDOMIZE,
 *       READ_IMPLIES_EXEC and the like).
 * </ol>
 *
 * See docs/containment.md, "Syscall filter", for the reason of each rule.
 */
public final class SeccompFilter {

  /** The architectures the filter is generated for; both little-endian. */
  public enum Arch {
    /** AUDIT_ARCH_X86_64: EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE. */
    X86_64(0xC000003E),
    /** AUDIT_ARCH_AARCH64: EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE. */
    AARCH64(0xC00000B7);

    final int auditArch;

    Arch(int auditArch) {
      this.auditArch = auditArch;
    }

    /** This JVM's architecture, from {@code os.arch}; empty on any other. */
    public static Optional<Arch> host() {
      return of(System.getProperty("os.arch", ""));
    }

    static Optional<Arch> of(String osArch) {
      return switch (osArch) {
        case "amd64", "x86_64" -> Optional.of(X86_64);
        case "aarch64" -> Optional.of(AARCH64);
        default -> Optional.empty();
      };
    }
  }

  /** Refused whatever their arguments; a name absent on an architecture is skipped there. */
  static final List<String> REFUSED =
      List.of(
          "mount",
          "umount2",
          "pivot_root",
          "open_tree",
          "move_mount",
          "fsopen",
          "fsconfig",
          "fsmount",
          "fspick",
          "mount_setattr",
          "setns",
          "ptrace",
          "process_vm_readv",
          "process_vm_writev",
          "pidfd_getfd",
          "keyctl",
          "add_key",
          "request_key",
          "bpf",
          "perf_event_open",
          "userfaultfd",
          "io_uring_setup",
          "io_uring_enter",
          "io_uring_register",
          "open_by_handle_at",
          "name_to_handle_at",
          "kexec_load",
          "kexec_file_load",
          "init_module",
          "finit_module",
          "delete_module",
          "acct",
          "swapon",
          "swapoff",
          "reboot",
          "quotactl",
          "quotactl_fd",
          "lookup_dcookie",
          "settimeofday",
          "clock_settime",
          "nfsservctl",
          "ioperm",
          "iopl",
          "uselib",
          "create_module",
          "get_kernel_syms",
          "query_module",
          "_sysctl",
          "sysfs",
          "ustat");

  // seccomp_data (include/uapi/linux/seccomp.h): int nr; u32 arch; u64 ip; u64 args[6]. The
  // filter reads the low half of an argument (little-endian: first): every argument it inspects
  // is an int or unsigned int in the kernel, which ignores the high half.
  static final int NR = 0;
  static final int ARCH = 4;

  static int argLow(int i) {
    return 16 + 8 * i;
  }

  static final int RET_ALLOW = 0x7fff0000; // SECCOMP_RET_ALLOW
  static final int RET_ERRNO = 0x00050000; // SECCOMP_RET_ERRNO | errno
  static final int EPERM = 1;
  static final int ENOSYS = 38; // the same on both (asm-generic errno)

  /** x86_64's x32 ABI: its numbers are the 64-bit ones with this bit (__X32_SYSCALL_BIT). */
  static final int X32_SYSCALL_BIT = 0x40000000;

  /**
   * CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. Not CLONE_NEWTIME (0x80): in
   * {@code clone} that bit belongs to the exit signal.
   */
  static final int CLONE_NEW_NAMESPACES = 0x7E020000;

  /** The same plus CLONE_NEWTIME, which {@code unshare} does take. */
  static final int UNSHARE_NEW_NAMESPACES = CLONE_NEW_NAMESPACES | 0x00000080;

  static final int TIOCSTI = 0x5412;
  static final int TIOCLINUX = 0x541C;

  static final int AF_UNIX = 1;
  static final int AF_INET = 2;
  static final int AF_INET6 = 10;

  /** The kernel keeps the type in these bits; the rest are SOCK_NONBLOCK and SOCK_CLOEXEC. */
  static final int SOCK_TYPE_MASK = 0xf;

  static final int SOCK_RAW = 3;

  /** Obsolete; {@code socket(AF_INET, SOCK_PACKET)} makes an AF_PACKET socket. */
  static final int SOCK_PACKET = 10;

  /**
   * The personas Docker's default profile allows too: PER_LINUX, PER_LINUX32, UNAME26 with each,
   * and 0xffffffff (the query that changes nothing).
   */
  static final List<Integer> SAFE_PERSONAS = List.of(0x0, 0x8, 0x20000, 0x20008, 0xffffffff);

  private SeccompFilter() {}

  /** The filter for {@code arch} as {@code struct sock_filter[]} bytes, ready for the kernel. */
  public static byte[] program(Arch arch) {
    BpfAssembler bpf = new BpfAssembler();
    bpf.load(ARCH).jumpIfEqual(arch.auditArch, "native").ret(RET_ERRNO | EPERM);
    bpf.label("native").load(NR);
    if (arch == Arch.X86_64) {
      bpf.jumpIfAtLeast(X32_SYSCALL_BIT, "deny");
    }
    for (String name : REFUSED) {
      SyscallTable.number(arch, name).ifPresent(nr -> bpf.jumpIfEqual(nr, "deny"));
    }
    bpf.jumpIfEqual(nr(arch, "clone3"), "enosys")
        .jumpIfEqual(nr(arch, "clone"), "clone")
        .jumpIfEqual(nr(arch, "unshare"), "unshare")
        .jumpIfEqual(nr(arch, "ioctl"), "ioctl")
        .jumpIfEqual(nr(arch, "socket"), "socket")
        .jumpIfEqual(nr(arch, "socketpair"), "socket")
        .jumpIfEqual(nr(arch, "personality"), "personality")
        .ret(RET_ALLOW);

    bpf.label("clone").load(argLow(0)).jumpIfAnySet(CLONE_NEW_NAMESPACES, "deny").ret(RET_ALLOW);
    bpf.label("unshare").load(argLow(0)).jumpIfAnySet(UNSHARE_NEW_NAMESPACES, "deny");
    bpf.ret(RET_ALLOW);
    bpf.label("ioctl").load(argLow(1)).jumpIfEqual(TIOCSTI, "deny").jumpIfEqual(TIOCLINUX, "deny");
    bpf.ret(RET_ALLOW);
    bpf.label("socket")
        .load(argLow(0))
        .jumpIfEqual(AF_UNIX, "type")
        .jumpIfEqual(AF_INET, "type")
        .jumpIfEqual(AF_INET6, "type")
        .ret(RET_ERRNO | EPERM);
    bpf.label("type").load(argLow(1)).and(SOCK_TYPE_MASK);
    bpf.jumpIfEqual(SOCK_RAW, "deny").jumpIfEqual(SOCK_PACKET, "deny").ret(RET_ALLOW);
    bpf.label("personality").load(argLow(0));
    for (int persona : SAFE_PERSONAS) {
      bpf.jumpIfEqual(persona, "allow");
    }
    bpf.ret(RET_ERRNO | EPERM);

    bpf.label("allow").ret(RET_ALLOW);
    bpf.label("deny").ret(RET_ERRNO | EPERM);
    bpf.label("enosys").ret(RET_ERRNO | ENOSYS);
    return bpf.assemble();
  }

  private static int nr(Arch arch, String name) {
    return SyscallTable.number(arch, name)
        .orElseThrow(() -> new IllegalStateException(name + " missing on " + arch));
  }

  private static final Set<PosixFilePermission> DIR_MODE =
      PosixFilePermissions.fromString("rwx------");
  private static final Set<PosixFilePermission> FILE_MODE =
      PosixFilePermissions.fromString("rw-------");

  /**
   * Writes {@code arch}'s program into {@code dir} and returns the file, named by the program's
   * SHA-256 so runs share it and a changed filter never reuses an old file. {@code dir} is made
   * 0700 when missing; an existing one must be a directory (not a link) owned by this JVM's user
   * with no group or other access, since whoever can replace the file can loosen the filter. The
   * file is 0600, written beside and moved into place, so a reader never sees half a program.
   * Blocking file I/O: call off actor threads.
   *
   * @throws IOException when {@code dir} cannot be made, is not private to this user, or the write
   *     fails
   */
  public static Path writeTo(Path dir, Arch arch) throws IOException {
    byte[] program = program(arch);
    privateDirectory(dir);
    Path file =
        dir.resolve(
            "seccomp-" + arch.name().toLowerCase(Locale.ROOT) + "-" + sha256(program) + ".bpf");
    if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
        && Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS).equals(FILE_MODE)
        && Arrays.equals(Files.readAllBytes(file), program)) {
      return file;
    }
    Path partial =
        Files.createTempFile(
            dir, ".seccomp-", ".partial", PosixFilePermissions.asFileAttribute(FILE_MODE));
    try {
      Files.write(partial, program);
      Files.move(
          partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(partial);
    }
    return file;
  }

  private static void privateDirectory(Path dir) throws IOException {
    try {
      Path parent = dir.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_MODE));
    } catch (FileAlreadyExistsException e) {
      // Checked below like any existing directory.
    }
    PosixFileAttributes attrs =
        Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    // The process's own uid is the owner of /proc/self (Linux, like seccomp itself).
    Object me = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    Object owner = Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    if (!attrs.isDirectory() || !owner.equals(me) || !attrs.permissions().equals(DIR_MODE)) {
      throw new AccessDeniedException(
          dir.toString(),
          null,
          "the seccomp filter's directory must be a directory owned by uid "
              + me
              + " with mode 0700 (chmod 700 it, or remove it to let the runtime make it)");
    }
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
