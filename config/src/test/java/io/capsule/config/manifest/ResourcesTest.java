package io.capsule.config.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.nio.file.Path;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code capabilities.resources}: sizes, bounds, and where a wrong value is reported. */
class ResourcesTest {

  @TempDir Path capsule;

  @ParameterizedTest(name = "{0} = {1} bytes")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          0              | 0
          1048576        | 1048576
          512MiB         | 536870912
          2GiB           | 2147483648
          2 GiB          | 2147483648
          1TiB           | 1099511627776
          64KiB          | 65536
          500MB          | 500000000
          1GB            | 1000000000
          3kB            | 3000
          3KB            | 3000
          100B           | 100
          8589934592GiB  | -1
          """)
  void sizesParseInBinaryAndDecimalUnits(String text, long bytes) {
    if (bytes < 0) {
      assertThrows(IllegalArgumentException.class, () -> ByteSize.parse(text));
    } else {
      assertEquals(bytes, ByteSize.parse(text));
    }
  }

  @ParameterizedTest(name = "''{0}'' is refused: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          2G       | unknown unit 'G'
          512M     | unknown unit 'M'
          1.5GiB   | is not a size
          -1MiB    | is not a size
          ''       | is not a size
          lots     | is not a size
          2 gib    | unknown unit 'gib'
          """)
  void ambiguousOrMalformedSizesAreRefused(String text, String says) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ByteSize.parse(text));
    assertTrue(e.getMessage().contains(says), e.getMessage());
  }

  @ParameterizedTest(name = "{0} shows as {1}")
  @CsvSource({"536870912, 512MiB", "4294967296, 4GiB", "1000, 1000B", "0, 0B", "3072, 3KiB"})
  void sizesShowInTheLargestBinaryUnitThatDividesThem(long bytes, String shown) {
    assertEquals(shown, ByteSize.show(bytes));
  }

  @Test
  void everyKeyIsReadFromTheFile() {
    Manifest m =
        ManifestLoader.parse(
            ManifestErrorsTest.BASE
                + "capabilities:\n  resources:\n    memory: 512MiB\n    processes: 64\n"
                + "    cpu: 1.5\n    file_size: 100MB\n    open_files: 1024\n",
            capsule,
            "m.yaml");

    assertEquals(
        new Capabilities.Resources(
            OptionalLong.of(512L << 20),
            OptionalInt.of(64),
            OptionalDouble.of(1.5),
            OptionalLong.of(100_000_000),
            OptionalInt.of(1024)),
        m.capabilities().resources());
  }

  @Test
  void aSilentManifestAsksNothingAndAPlainByteCountIsASize() {
    assertEquals(
        Capabilities.Resources.UNSTATED,
        ManifestLoader.parse(ManifestErrorsTest.BASE, capsule, "m.yaml")
            .capabilities()
            .resources());
    Manifest m =
        ManifestLoader.parse(
            ManifestErrorsTest.BASE + "capabilities:\n  resources:\n    memory: 67108864\n",
            capsule,
            "m.yaml");
    assertEquals(OptionalLong.of(64L << 20), m.capabilities().resources().memoryBytes());
    assertEquals(OptionalInt.empty(), m.capabilities().resources().processes());
  }

  @Test
  void theBuilderWritesTheSameKeys() {
    Manifest m =
        Manifest.builder("t", "1.0.0")
            .builtinDriver("jsonl", "0.6.0")
            .memoryLimit("2GiB")
            .processLimit(100)
            .cpuLimit(0.5)
            .fileSizeLimit("1GiB")
            .openFilesLimit(256)
            .build();

    Capabilities.Resources r = m.capabilities().resources();
    assertEquals(OptionalLong.of(2L << 30), r.memoryBytes());
    assertEquals(OptionalInt.of(100), r.processes());
    assertEquals(OptionalDouble.of(0.5), r.cpuCores());
    assertEquals(OptionalLong.of(1L << 30), r.fileSizeBytes());
    assertEquals(OptionalInt.of(256), r.openFiles());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          a size with an ambiguous unit  | memory      | memory: §2G
          memory below 16 MiB            | memory      | memory: §1MiB
          memory given as a list         | memory      | memory: §[1, 2]
          processes that are text        | processes   | processes: §many
          processes below 4              | processes   | processes: §2
          processes above the pid limit  | processes   | processes: §5000000
          processes as a fraction        | processes   | processes: §1.5
          cpu that is text               | cpu         | cpu: §'2'
          cpu of zero                    | cpu         | cpu: §0
          cpu above 1024                 | cpu         | cpu: §2000
          file_size below 1 MiB          | file_size   | file_size: §4KiB
          open_files below 64            | open_files  | open_files: §8
          open_files above nr_open       | open_files  | open_files: §2000000
          an unknown key                 | swap        | §swap: 1GiB
          """)
  void eachWrongValueIsReportedAtItsKey(String why, String key, String line) {
    Marked yaml =
        Marked.of(ManifestErrorsTest.BASE + "capabilities:\n  resources:\n    " + line + "\n");

    ManifestInvalid invalid =
        assertThrows(
            ManifestInvalid.class, () -> ManifestLoader.parse(yaml.text(), capsule, "m.yaml"));

    assertEquals(1, invalid.diagnostics().size(), () -> why + ": " + invalid.render());
    Diagnostic d = invalid.diagnostic();
    assertEquals(Code.E_MAN_002, d.code(), d::render);
    assertEquals("capabilities.resources." + key, d.details().get("key"), d::render);
    assertEquals(String.valueOf(yaml.line()), d.details().get("line"), d::render);
    assertEquals(String.valueOf(yaml.column()), d.details().get("column"), d::render);
  }
}
