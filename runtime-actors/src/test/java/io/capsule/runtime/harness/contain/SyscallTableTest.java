package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.capsule.runtime.harness.contain.SeccompFilter.Arch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every syscall number the filter uses is the one libseccomp assigns on that architecture (its
 * tables follow the kernel's). Real {@code scmp_sys_resolver}, from Debian's package {@code
 * seccomp} (CI installs it); a negative answer means the call does not exist there.
 */
@Timeout(60)
class SyscallTableTest {

  static final Path RESOLVER = Path.of("/usr/bin/scmp_sys_resolver");

  @ParameterizedTest
  @EnumSource(Arch.class)
  void everyNumberIsTheOneLibseccompKnows(Arch arch) throws Exception {
    if (!Files.isExecutable(RESOLVER)) {
      String missing = RESOLVER + " is missing: install the Debian package seccomp";
      if (System.getenv("CI") != null) {
        fail(missing);
      }
      Assumptions.abort(missing);
    }
    List<SyscallTable.Syscall> rows =
        Stream.concat(SyscallTable.ROWS.stream(), SeccompFilterTest.ORDINARY.stream()).toList();
    List<String> argv =
        new ArrayList<>(
            List.of(
                "/bin/sh",
                "-c",
                "a=$1; shift; for n do \"$0\" -a \"$a\" \"$n\" || echo failed; done",
                RESOLVER.toString(),
                arch == Arch.X86_64 ? "x86_64" : "aarch64"));
    rows.forEach(row -> argv.add(row.name()));
    Process resolver = new ProcessBuilder(argv).redirectErrorStream(true).start();
    resolver.getOutputStream().close();
    byte[] out = resolver.getInputStream().readNBytes(64 * 1024);
    assertTrue(resolver.waitFor(30, TimeUnit.SECONDS), "scmp_sys_resolver answered in 30 s");
    List<String> numbers = new String(out, StandardCharsets.UTF_8).lines().toList();

    assertEquals(rows.size(), numbers.size(), () -> "one answer per name: " + numbers);
    for (int i = 0; i < rows.size(); i++) {
      SyscallTable.Syscall row = rows.get(i);
      int libseccomp = Integer.parseInt(numbers.get(i).trim());
      if (row.number(arch) == SyscallTable.ABSENT) {
        assertTrue(libseccomp < 0, row.name() + " exists on " + arch + " as " + libseccomp);
      } else {
        assertEquals(libseccomp, row.number(arch), () -> row.name() + " on " + arch);
      }
    }
  }
}
