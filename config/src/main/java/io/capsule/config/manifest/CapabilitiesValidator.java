package io.capsule.config.manifest;

import io.capsule.config.diag.Code;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/** Validates {@code capabilities}: part of {@link ManifestValidator}, split out for size. */
final class CapabilitiesValidator {

  /** POSIX portable environment names: what a process environment can carry unambiguously. */
  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /**
   * A shell tool is a bare binary name (it becomes a tool name on the bridge and is looked up on
   * the granted PATH), never a path.
   */
  private static final Pattern BINARY = Pattern.compile("[A-Za-z0-9_+][A-Za-z0-9._+-]*");

  private static final Set<String> CAPABILITY_KEYS =
      Set.of("env", "network", "harness", "shell", "filesystem", "resources");

  private final Problems problems;

  CapabilitiesValidator(Problems problems) {
    this.problems = problems;
  }

  Capabilities capabilities(Section top) {
    Optional<Section> found = top.section("capabilities", false, CAPABILITY_KEYS);
    if (found.isEmpty()) {
      return Capabilities.NONE;
    }
    Section caps = found.get();
    return new Capabilities(
        caps.section("env", false, Set.of("allow", "allow_credentials"))
            .map(this::env)
            .orElse(Capabilities.NONE.env()),
        caps.section("network", false, Set.of("allow"))
            .map(this::network)
            .orElse(Capabilities.NONE.network()),
        caps.section("harness", false, Set.of("paths"))
            .map(this::harness)
            .orElse(Capabilities.NONE.harness()),
        caps.section("shell", false, Set.of("allow"))
            .map(this::shell)
            .orElse(Capabilities.NONE.shell()),
        caps.section("filesystem", false, Set.of("read_only"))
            .map(f -> new Capabilities.Filesystem(f.bool("read_only").orElse(false)))
            .orElse(Capabilities.NONE.filesystem()),
        caps.section("resources", false, ResourcesValidator.KEYS)
            .map(new ResourcesValidator(problems)::resources)
            .orElse(Capabilities.Resources.UNSTATED));
  }

  private Capabilities.Env env(Section env) {
    List<Section.Element> credentials = envNames(env, "allow_credentials");
    Set<String> declared = new HashSet<>();
    // Every allow_credentials entry is a credential by the author's own declaration, whatever its
    // shape, and reaches the harness: each one is a W-SEC-024 so it shows in every run's output.
    for (Section.Element c : credentials) {
      declared.add(c.text());
      problems.atValue(
          Code.W_SEC_024,
          c.path(),
          "'" + c.text() + "' is granted as a credential and reaches the harness's environment");
    }
    List<String> allow = new ArrayList<>();
    for (Section.Element e : envNames(env, "allow")) {
      if (CredentialNames.isCredentialShaped(e.text()) && !declared.contains(e.text())) {
        problems.atValue(
            Code.E_CAP_016,
            e.path(),
            "'"
                + e.text()
                + "' looks like a credential; list it under capabilities.env.allow_credentials"
                + " to grant it knowingly");
      }
      allow.add(e.text());
    }
    return new Capabilities.Env(allow, credentials.stream().map(Section.Element::text).toList());
  }

  private List<Section.Element> envNames(Section env, String key) {
    List<Section.Element> names = new ArrayList<>();
    for (Section.Element e : env.strings(key)) {
      if (ENV_NAME.matcher(e.text()).matches()) {
        names.add(e);
      } else {
        problems.atValue(
            Code.E_MAN_002,
            e.path(),
            "'" + e.text() + "' is not an environment name ([A-Za-z_][A-Za-z0-9_]*)");
      }
    }
    return names;
  }

  private Capabilities.Network network(Section network) {
    List<NetworkEntry> allow = new ArrayList<>();
    for (Section.Element e : network.strings("allow")) {
      try {
        allow.add(NetworkEntry.parse(e.text()));
      } catch (IllegalArgumentException bad) {
        problems.atValue(
            Code.E_MAN_002, e.path(), "network entry '" + e.text() + "': " + bad.getMessage());
      }
    }
    return new Capabilities.Network(allow);
  }

  private Capabilities.Harness harness(Section harness) {
    List<HarnessPath> paths = new ArrayList<>();
    for (Section.Element e : harness.list("paths")) {
      if (!e.node().isObject()) {
        problems.atValue(
            Code.E_MAN_002,
            e.path(),
            e.path() + " must be a mapping {path, access}, got " + Section.describe(e.node()));
        continue;
      }
      Section entry = Section.of(e.node(), e.path(), problems, Set.of("path", "access"));
      Optional<String> path = entry.text("path", true);
      // Read is the narrower grant, so it is the default when access is left out.
      Access access =
          entry.choice("access", false, Access.values(), Access::yaml).orElse(Access.READ);
      if (path.isPresent()) {
        try {
          paths.add(new HarnessPath(path.get(), access));
        } catch (IllegalArgumentException bad) {
          problems.atValue(Code.E_MAN_002, entry.pathOf("path"), bad.getMessage());
        }
      }
    }
    return new Capabilities.Harness(paths);
  }

  private Capabilities.Shell shell(Section shell) {
    List<String> allow = new ArrayList<>();
    for (Section.Element e : shell.strings("allow")) {
      if (BINARY.matcher(e.text()).matches()) {
        allow.add(e.text());
      } else {
        problems.atValue(
            Code.E_MAN_002,
            e.path(),
            "'" + e.text() + "' is not a bare binary name (no paths, no spaces)");
      }
    }
    return new Capabilities.Shell(allow);
  }
}
