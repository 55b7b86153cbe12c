package io.capsule.config.manifest;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a capsule's {@code murmur.yaml} and validates it whole.
 *
 * <p>Threading: pure functions over the file system; call them off any actor thread (they do
 * blocking file I/O).
 */
public final class ManifestLoader {

  private ManifestLoader() {}

  /**
   * Loads the manifest of a capsule.
   *
   * @param capsule the capsule directory (holding {@code murmur.yaml}) or the manifest file itself
   *     (its directory is then the capsule directory)
   * @throws ManifestInvalid every problem found: {@code E-MAN-001} when the file cannot be read or
   *     is not YAML, else each validation error
   */
  public static Manifest load(Path capsule) {
    Path file = Files.isDirectory(capsule) ? capsule.resolve(Manifest.FILE_NAME) : capsule;
    Path dir = file.toAbsolutePath().normalize().getParent();
    String label = file.toString();
    String text;
    try {
      text = TextFiles.readUtf8(file);
    } catch (NoSuchFileException e) {
      // The default hint (fix the YAML) would send a person to a file that does not exist.
      if (!Files.exists(capsule)) {
        throw unreadable(
            label,
            "there is no capsule folder " + capsule,
            "pass the path of a capsule folder holding murmur.yaml (examples/hello is one)");
      }
      throw unreadable(
          label,
          "no manifest at " + file + " (a capsule is a folder with murmur.yaml)",
          "create " + file + " (docs/manifest.md lists every key), or pass another folder");
    } catch (CharacterCodingException e) {
      throw unreadable(label, "the manifest is not UTF-8 text", "save the file as UTF-8");
    } catch (TextFiles.TooLarge e) {
      throw unreadable(label, "the manifest is " + e.getMessage() + "; is this the right file?");
    } catch (IOException e) {
      throw unreadable(label, "cannot read " + file + ": " + e.getMessage());
    }
    return parse(text, dir, label, Optional.of(file.toAbsolutePath().normalize()));
  }

  /**
   * Validates manifest text that did not come from a file of its own (embedding, tests).
   *
   * @param yaml the manifest text
   * @param capsuleDir the directory relative paths in it are resolved against
   * @param label what diagnostics name as {@code file}
   * @throws ManifestInvalid every problem found
   */
  public static Manifest parse(String yaml, Path capsuleDir, String label) {
    return parse(yaml, capsuleDir, label, Optional.empty());
  }

  private static Manifest parse(
      String yaml, Path capsuleDir, String label, Optional<Path> manifestFile) {
    LocatedTree tree;
    try {
      tree = YamlTreeReader.read(yaml);
    } catch (YamlTreeReader.NotYaml e) {
      Map<String, String> details = new LinkedHashMap<>();
      details.put("file", label);
      e.location()
          .ifPresent(
              at -> {
                details.put("line", Integer.toString(at.line()));
                details.put("column", Integer.toString(at.column()));
              });
      throw new ManifestInvalid(
          List.of(Diagnostic.of(Code.E_MAN_001, "not YAML: " + e.getMessage(), details)),
          List.of());
    }
    return ManifestValidator.validate(tree, capsuleDir, label, manifestFile);
  }

  private static ManifestInvalid unreadable(String label, String message) {
    return new ManifestInvalid(
        List.of(Diagnostic.of(Code.E_MAN_001, message, Map.of("file", label))), List.of());
  }

  private static ManifestInvalid unreadable(String label, String message, String hint) {
    return new ManifestInvalid(
        List.of(Diagnostic.of(Code.E_MAN_001, message, Map.of("file", label)).withHint(hint)),
        List.of());
  }
}
