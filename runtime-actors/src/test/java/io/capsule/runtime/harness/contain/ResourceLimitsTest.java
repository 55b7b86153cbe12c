package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.ByteSize;
import io.capsule.config.manifest.Capabilities;
import io.capsule.config.settings.ResourceSettings;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The effective limits: manifest, else default, never above the ceiling (a spec table). */
class ResourceLimitsTest {

  /** Defaults 4GiB/512/all cores/1GiB/4096, ceilings 16GiB/4096/all cores/8GiB/65536. */
  static final ResourceSettings SHIPPED = ResourceSettings.DEFAULTS;

  @ParameterizedTest(name = "asked [{0}] on {1} cores → {2} (cut: {3})")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
          -,-,-,-,-                     | 8 | 4GiB,512,8.0,1GiB,4096     | -
          512MiB,64,1.5,100MiB,1024     | 8 | 512MiB,64,1.5,100MiB,1024  | -
          16GiB,4096,8,8GiB,65536       | 8 | 16GiB,4096,8.0,8GiB,65536  | -
          32GiB,-,-,-,-                 | 8 | 16GiB,512,8.0,1GiB,4096    | memory
          -,10000,-,-,-                 | 8 | 4GiB,4096,8.0,1GiB,4096    | processes
          -,-,16,-,-                    | 8 | 4GiB,512,8.0,1GiB,4096     | cpu
          -,-,-,9GiB,100000             | 2 | 4GiB,512,2.0,8GiB,65536    | file_size open_files
          64GiB,5000,3,1TiB,70000       | 2 | 16GiB,4096,2.0,8GiB,65536  | memory processes cpu file_size open_files
          """)
  void theManifestAsksTheDefaultFillsAndTheCeilingCuts(
      String asked, int cores, String expected, String cut) {
    ResourceLimits limits = ResourceLimits.effective(resources(asked), SHIPPED, cores);

    String[] e = expected.split(",");
    assertEquals(ByteSize.parse(e[0]), limits.memoryBytes(), "memory");
    assertEquals(Integer.parseInt(e[1]), limits.processes(), "processes");
    assertEquals(Double.parseDouble(e[2]), limits.cpuCores(), "cpu");
    assertEquals(ByteSize.parse(e[3]), limits.fileSizeBytes(), "file_size");
    assertEquals(Integer.parseInt(e[4]), limits.openFiles(), "open_files");
    List<String> cutKeys = cut == null ? List.of() : List.of(cut.split(" "));
    assertEquals(
        cutKeys.stream().map(k -> "capabilities.resources." + k).toList(),
        limits.warnings().stream().map(d -> d.details().get("key")).toList());
    limits.warnings().forEach(d -> assertEquals(Code.W_CAP_054, d.code()));
  }

  @Test
  void aCutNamesTheCeilingToRaise() {
    Diagnostic d =
        ResourceLimits.effective(resources("32GiB,-,-,-,-"), SHIPPED, 2).warnings().get(0);

    assertEquals(
        "capabilities.resources.memory asked for 32GiB, above the operator's ceiling"
            + " capsule.harness.resources.memory-max = 16GiB; the run gets 16GiB",
        d.message());
    assertEquals("capsule.harness.resources.memory-max", d.details().get("ceiling"));
  }

  @ParameterizedTest(name = "{0} cores → quota {1} µs per 100 ms")
  @CsvSource({"1.5, 150000", "0.5, 50000", "0.01, 1000", "0.004, 1000", "8, 800000"})
  void theCpuShareBecomesACfsQuota(double cores, long quota) {
    assertEquals(quota, new ResourceLimits(1, 1, cores, 1, 1, List.of()).cpuQuotaMicros());
  }

  @Test
  void aBreachEndsTheRunWithItsCodeTheLimitAndTheKeyToRaise() {
    ResourceLimits limits = new ResourceLimits(64L << 20, 32, 1, 1L << 20, 64, List.of());

    Diagnostic memory = Breach.MEMORY.diagnostic(limits);
    assertEquals(Code.E_RUN_047, memory.code());
    assertEquals(
        "the run passed its memory limit of 64MiB and the kernel killed a process of it (out of"
            + " memory)",
        memory.message());
    assertEquals("capabilities.resources.memory", memory.details().get("limit"));

    Diagnostic processes = Breach.PROCESSES.diagnostic(limits);
    assertEquals(Code.E_RUN_048, processes.code());
    assertEquals(
        "the run passed its limit of 32 processes and threads: a fork was refused",
        processes.message());
    assertEquals("capabilities.resources.processes", processes.details().get("limit"));
    assertTrue(processes.hint().contains("capsule.harness.resources.processes-max"));
  }

  /** {@code memory,processes,cpu,file_size,open_files}, {@code -} for unstated. */
  static Capabilities.Resources resources(String row) {
    String[] v = row.split(",");
    return new Capabilities.Resources(
        v[0].equals("-") ? OptionalLong.empty() : OptionalLong.of(ByteSize.parse(v[0])),
        v[1].equals("-") ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(v[1])),
        v[2].equals("-") ? OptionalDouble.empty() : OptionalDouble.of(Double.parseDouble(v[2])),
        v[3].equals("-") ? OptionalLong.empty() : OptionalLong.of(ByteSize.parse(v[3])),
        v[4].equals("-") ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(v[4])));
  }
}
