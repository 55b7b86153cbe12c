package io.capsule.cli;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * {@code W-MAN-004}: a runner finds the backend {@code capsule:NAME} as the folder {@code NAME}, so
 * a capsule whose {@code name:} differs from its folder is reachable only by the folder's name. Not
 * a manifest error: {@code capsule run DIR} works with any folder, so only {@code doctor} and a
 * runner's start say it.
 */
final class FolderNames {
  private FolderNames() {}

  /** The warning for this manifest, when its folder is named otherwise. */
  static Optional<Diagnostic> mismatch(Manifest manifest) {
    Path folder = manifest.capsuleDir().getFileName();
    String name = folder == null ? "" : folder.toString();
    if (name.equals(manifest.name())) {
      return Optional.empty();
    }
    return Optional.of(
        Diagnostic.of(
                Code.W_MAN_004,
                "the capsule is named '"
                    + manifest.name()
                    + "' but its folder is '"
                    + name
                    + "': runners offer it as capsule:"
                    + name
                    + ", and capsule:"
                    + manifest.name()
                    + " does not reach it")
            .with("folder", manifest.capsuleDir()));
  }

  /**
   * Every mismatch among the capsule folders under {@code capsules}, in name order. A folder whose
   * manifest does not load is skipped: its own refusal comes with the first task that names it.
   */
  static List<Diagnostic> mismatches(Path capsules) {
    List<Diagnostic> found = new ArrayList<>();
    List<Path> folders;
    try (Stream<Path> children = Files.list(capsules)) {
      folders = children.filter(Files::isDirectory).sorted().toList();
    } catch (IOException e) {
      return found;
    }
    for (Path folder : folders) {
      if (!Files.isRegularFile(folder.resolve(Manifest.FILE_NAME))) {
        continue;
      }
      try {
        mismatch(ManifestLoader.load(folder)).ifPresent(found::add);
      } catch (DiagnosticException e) {
        // reported when a task names it; a runner must start even beside a broken capsule
      }
    }
    return found;
  }
}
