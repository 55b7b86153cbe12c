package io.capsule.runtime.harness.contain;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The system part of the sandbox's file system (pure; a function of the host, table-tested): what a
 * harness or tool sees besides its installation, its grants and the run's directories
 * (docs/containment.md "What the sandbox sees").
 *
 * <p>The root is an empty file system of bubblewrap's; onto it, read-only: {@code /usr} (where
 * programs, libraries, certificates and time zones live), the library and binary directories at the
 * top ({@code /bin}, {@code /sbin}, {@code /lib}, {@code /lib32}, {@code /lib64}, {@code /libx32}:
 * as the same symbolic links where the host merged them into {@code /usr}), and an {@code /etc} of
 * {@link #ETC} only. Fresh: {@code /dev} (null, zero, full, random, urandom, tty, a private {@code
 * /dev/shm}), {@code /proc} of the sandbox's own PID namespace with {@code /proc/sys} and the
 * kernel's trigger files read-only, and an empty {@code /tmp}.
 *
 * <p>Absent (ENOENT, not merely read-only): {@code /run} and every host socket under it, {@code
 * /var}, {@code /srv}, {@code /home}, {@code /root}, {@code /mnt}, {@code /media}, {@code /opt},
 * {@code /boot}, {@code /sys}, and every {@code /etc} entry not listed ({@code shadow}, {@code
 * gshadow}, {@code ssh/}, {@code sudoers}, {@code machine-id}, …).
 */
final class SealedRoot {

  /** The top-level directories of programs and libraries, shown read-only (or as links). */
  static final List<Path> SYSTEM_DIRS =
      List.of("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32").stream()
          .map(Path::of)
          .toList();

  /**
   * The {@code /etc} entries a program needs to run and to name users, hosts and certificates, and
   * nothing that holds a secret or identifies the host beyond its name: user and group names
   * ({@code passwd} and {@code group} hold no passwords on a shadowed system), name resolution
   * files (the proxy resolves names; programs still read them), the dynamic linker's cache, the CA
   * bundle (Debian's {@code ssl} and {@code ca-certificates}, Fedora's {@code pki} and {@code
   * crypto-policies}), the time zone, the {@code alternatives} links Debian's {@code /usr/bin}
   * points into, the OS release, and the system git configuration. Each entry is a mount of its own
   * (about a third of a millisecond each), so the list stays short.
   */
  static final List<String> ETC =
      List.of(
          "passwd",
          "group",
          "nsswitch.conf",
          "hosts",
          "resolv.conf",
          "services",
          "ld.so.cache",
          "ssl",
          "ca-certificates",
          "pki",
          "crypto-policies",
          "alternatives",
          "localtime",
          "os-release",
          "gitconfig");

  /**
   * Files of {@code /proc} that write to the whole machine (sysctls, the magic SysRq key, file
   * system tunables): read-only inside, since a sandbox whose user maps to the runner's would pass
   * their owner check. ({@code /proc/irq} and {@code /proc/bus} bubblewrap covers itself.)
   */
  static final List<Path> PROC_READ_ONLY =
      List.of("/proc/sys", "/proc/sysrq-trigger", "/proc/fs").stream().map(Path::of).toList();

  private SealedRoot() {}

  /** The system mounts, in no particular order (the caller sorts all mounts by depth). */
  static List<Mount> mounts(HostView host) {
    List<Mount> mounts = new ArrayList<>();
    for (Path dir : SYSTEM_DIRS) {
      Optional<Path> link = host.symlinkTarget(dir);
      if (link.isPresent()) {
        mounts.add(new Mount("--symlink", link.get(), dir));
      } else if (host.exists(dir)) {
        mounts.add(Mount.bind("--ro-bind", dir));
      }
    }
    Path etc = Path.of("/etc");
    mounts.add(Mount.fresh("--dir", etc));
    for (String name : ETC) {
      Path entry = etc.resolve(name);
      if (host.exists(entry)) {
        mounts.add(Mount.bind("--ro-bind-try", entry));
      }
    }
    mounts.add(Mount.fresh("--dev", Path.of("/dev")));
    mounts.add(Mount.fresh("--proc", Path.of("/proc")));
    for (Path p : PROC_READ_ONLY) {
      mounts.add(Mount.bind("--ro-bind-try", p));
    }
    mounts.add(Mount.fresh("--tmpfs", Path.of("/tmp")));
    return mounts;
  }

  /**
   * Whether {@code path} is shown by the system mounts already (under {@code /usr} or a top-level
   * system directory, through its link where merged): then an installation there needs no bind.
   */
  static boolean shows(Path path, HostView host) {
    Path p = path.normalize();
    for (Path dir : SYSTEM_DIRS) {
      if (p.startsWith(dir) && host.exists(dir)) {
        return true;
      }
    }
    return false;
  }
}
