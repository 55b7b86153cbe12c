package io.capsule.config.manifest;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads the small text files a capsule holds: strict UTF-8, with a size cap. */
final class TextFiles {

  /**
   * The largest manifest or inlined prompt read. A manifest is a page of YAML and a system prompt a
   * few pages of text; 1 MiB is far above both and keeps a wrong path (a log, a model file) from
   * being read into memory whole.
   */
  static final int CAP_BYTES = 1024 * 1024;

  /** The file is larger than {@link #CAP_BYTES}. */
  static final class TooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    TooLarge() {
      super("larger than " + CAP_BYTES + " bytes");
    }
  }

  private TextFiles() {}

  /**
   * The file's text.
   *
   * @throws java.nio.file.NoSuchFileException when it does not exist
   * @throws CharacterCodingException when it is not UTF-8
   * @throws TooLarge when it is larger than {@link #CAP_BYTES}
   */
  static String readUtf8(Path file) throws IOException {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(CAP_BYTES + 1);
    }
    if (bytes.length > CAP_BYTES) {
      throw new TooLarge();
    }
    return StandardCharsets.UTF_8
        .newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(bytes))
        .toString();
  }
}
