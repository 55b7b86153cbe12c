package io.capsule.cli;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Writes the release's default settings file, {@code conf/reference.conf}: every {@code
 * reference.conf} on the classpath that defines {@code capsule.*} (one per module that has
 * settings), concatenated the way the runnable jar merges them, with their comments, which give
 * each default's reason. Pekko's own reference files are left out. Run by the build (cli/pom.xml)
 * before the release archive is assembled; not part of the {@code capsule} command.
 */
public final class ReleaseDefaults {
  private ReleaseDefaults() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: ReleaseDefaults OUTPUT_FILE");
    }
    ClassLoader loader = ReleaseDefaults.class.getClassLoader();
    List<String> parts = new ArrayList<>();
    for (URL url : Collections.list(loader.getResources("reference.conf"))) {
      if (ConfigFactory.parseURL(url).hasPath("capsule")) {
        try (InputStream in = url.openStream()) {
          parts.add(new String(in.readAllBytes(), StandardCharsets.UTF_8).stripTrailing() + "\n");
        }
      }
    }
    if (parts.isEmpty()) {
      throw new IllegalStateException("no reference.conf with capsule.* on the classpath");
    }
    Path out = Path.of(args[0]);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, String.join("\n", parts));
  }
}
