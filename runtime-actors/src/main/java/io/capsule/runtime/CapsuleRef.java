package io.capsule.runtime;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.capsule.runtime.driver.DriverRegistry;
import java.util.Objects;

/**
 * Which capsule a run uses, as a serializable value: a capsule folder on the run's node, or a
 * capsule registered in memory on that node ({@link DriverRegistry.Register}) under a name.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "ref")
@JsonSubTypes({
  @JsonSubTypes.Type(value = CapsuleRef.Folder.class, name = "folder"),
  @JsonSubTypes.Type(value = CapsuleRef.Registered.class, name = "registered")
})
public sealed interface CapsuleRef extends CapsuleSerializable {

  /** The cache key of this capsule in the registry. */
  String key();

  /** A folder with {@code murmur.yaml}; the path as the run's node sees it. */
  record Folder(String path) implements CapsuleRef {
    public Folder {
      Objects.requireNonNull(path, "path");
    }

    @Override
    public String key() {
      return "folder:" + path;
    }
  }

  /** A manifest and Java driver registered in memory under {@code name}. */
  record Registered(String name) implements CapsuleRef {
    public Registered {
      Objects.requireNonNull(name, "name");
    }

    @Override
    public String key() {
      return "registered:" + name;
    }
  }
}
