package io.capsule.config.manifest;

import java.util.Objects;

/**
 * One {@code capabilities.harness.paths} entry, also the shape of a driver's path need: {@code
 * ~/<rest>} or an absolute path, a directory. Paths compare literally (a {@code ~/} path is not
 * expanded here), segment by segment.
 *
 * @param path normalized: no trailing slash (except {@code /}), no empty, {@code .} or {@code ..}
 *     segments
 * @param access read or read-write
 */
public record HarnessPath(String path, Access access) {

  public HarnessPath {
    Objects.requireNonNull(access, "access");
    path = normalize(path);
  }

  /**
   * Checks and normalizes a harness path.
   *
   * @throws IllegalArgumentException with one line saying what is wrong
   */
  public static String normalize(String path) {
    if (path == null || path.isBlank()) {
      throw new IllegalArgumentException("a harness path must not be blank");
    }
    if (path.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("a harness path must not contain NUL");
    }
    String rest;
    String prefix;
    if (path.startsWith("~/")) {
      prefix = "~/";
      rest = path.substring(2);
    } else if (path.startsWith("/")) {
      prefix = "/";
      rest = path.substring(1);
    } else {
      throw new IllegalArgumentException("'" + path + "' must be ~/<rest> or an absolute path");
    }
    while (rest.endsWith("/")) {
      rest = rest.substring(0, rest.length() - 1);
    }
    if (rest.isEmpty()) {
      if (prefix.equals("~/")) {
        throw new IllegalArgumentException("'" + path + "' must name something under ~/");
      }
      return "/";
    }
    for (String segment : rest.split("/", -1)) {
      if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
        throw new IllegalArgumentException(
            "'" + path + "' has an empty, '.' or '..' segment; write the path plainly");
      }
    }
    return prefix + rest;
  }

  /** Whether this grant allows {@code needPath} (itself or below it) at {@code needAccess}. */
  public boolean covers(String needPath, Access needAccess) {
    String need = normalize(needPath);
    if (!access.covers(needAccess)) {
      return false;
    }
    if (path.equals("/")) {
      return need.startsWith("/");
    }
    return need.equals(path) || need.startsWith(path + "/");
  }
}
