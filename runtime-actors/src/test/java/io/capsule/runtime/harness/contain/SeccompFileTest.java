package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.runtime.harness.contain.SeccompFilter.Arch;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The program on disk, where bubblewrap reads it ({@link SeccompFilter#writeTo}), and the
 * assembler's refusals of programs the kernel would not load.
 */
class SeccompFileTest {

  @TempDir Path tmp;

  @Test
  void writesTheProgramPrivatelyUnderItsOwnHash() throws Exception {
    Path dir = tmp.resolve("state/seccomp");
    Path file = SeccompFilter.writeTo(dir, Arch.X86_64);

    assertArrayEquals(SeccompFilter.program(Arch.X86_64), Files.readAllBytes(file));
    assertEquals(dir, file.getParent());
    assertTrue(file.getFileName().toString().matches("seccomp-x86_64-[0-9a-f]{16}\\.bpf"));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    // Again: the same file; the other architecture: another; nothing half-written is left.
    assertEquals(file, SeccompFilter.writeTo(dir, Arch.X86_64));
    assertNotEquals(file, SeccompFilter.writeTo(dir, Arch.AARCH64));
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(2, files.count());
    }
  }

  @Test
  void replacesAFileWhoseContentIsNotTheProgram() throws Exception {
    Path dir = tmp.resolve("seccomp");
    Path file = SeccompFilter.writeTo(dir, Arch.AARCH64);
    Files.write(file, new byte[] {6, 0, 0, 0, 0, 0, (byte) 0xff, 0x7f});

    assertEquals(file, SeccompFilter.writeTo(dir, Arch.AARCH64));
    assertArrayEquals(SeccompFilter.program(Arch.AARCH64), Files.readAllBytes(file));
  }

  @Test
  void refusesADirectoryOthersCanEnter() throws Exception {
    Path dir =
        Files.createDirectory(
            tmp.resolve("open"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));

    AccessDeniedException e =
        assertThrows(AccessDeniedException.class, () -> SeccompFilter.writeTo(dir, Arch.X86_64));
    assertTrue(e.getMessage().contains("mode 0700"), e.getMessage());
  }

  @Test
  void refusesALinkInPlaceOfTheDirectory() throws Exception {
    Path real =
        Files.createDirectory(
            tmp.resolve("real"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path link = Files.createSymbolicLink(tmp.resolve("link"), real);

    assertThrows(AccessDeniedException.class, () -> SeccompFilter.writeTo(link, Arch.X86_64));
    try (Stream<Path> files = Files.list(real)) {
      assertEquals(0, files.count(), "nothing written through the link");
    }
  }

  @Test
  void theAssemblerRefusesAJumpBeyondOneByte() {
    BpfAssembler far = new BpfAssembler().load(0).jumpIfEqual(1, "end");
    for (int i = 0; i < 256; i++) {
      far.and(1);
    }
    far.label("end").ret(0);
    assertThrows(IllegalStateException.class, far::assemble);

    BpfAssembler near = new BpfAssembler().load(0).jumpIfEqual(1, "end");
    for (int i = 0; i < 255; i++) {
      near.and(1);
    }
    near.label("end").ret(0);
    BpfInterpreter.check(near.assemble());
  }

  @Test
  void theAssemblerRefusesAMissingLabelABackwardJumpAndAnOpenEnd() {
    assertThrows(
        IllegalStateException.class,
        () -> new BpfAssembler().jumpIfEqual(1, "nowhere").ret(0).assemble());
    assertThrows(
        IllegalStateException.class,
        () -> new BpfAssembler().label("top").load(0).jumpIfEqual(1, "top").ret(0).assemble());
    assertThrows(IllegalStateException.class, () -> new BpfAssembler().load(0).assemble());
    assertThrows(
        IllegalStateException.class, () -> new BpfAssembler().label("a").label("a").ret(0));
  }
}
