package io.capsule.config.settings;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code capsule.hub.*}: where a runner dials out to.
 *
 * @param url the hub's {@code ws://} or {@code wss://} address; empty when there is no hub
 * @param tokenFile the file the runner reads its bearer token from; empty when none
 * @param projectId {@code hello.project_id}; empty = the token's {@code project_id} claim
 */
public record HubSettings(Optional<URI> url, Optional<Path> tokenFile, Optional<String> projectId) {

  public HubSettings {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(tokenFile, "tokenFile");
    Objects.requireNonNull(projectId, "projectId");
  }

  static HubSettings read(SettingsReader r) {
    String urlKey = "capsule.hub.url";
    Optional<URI> url = Optional.empty();
    Optional<String> text = r.optionalText(urlKey);
    if (text.isPresent()) {
      try {
        URI uri = new URI(text.get());
        if (!"ws".equals(uri.getScheme()) && !"wss".equals(uri.getScheme())
            || uri.getHost() == null) {
          r.problem(urlKey, "must be a ws:// or wss:// URL with a host, got '" + text.get() + "'");
        } else {
          url = Optional.of(uri);
        }
      } catch (URISyntaxException e) {
        r.problem(urlKey, "is not a URL: " + e.getMessage());
      }
    }
    return new HubSettings(
        url,
        r.optionalText("capsule.hub.token-file").map(Path::of),
        r.optionalText("capsule.hub.project-id"));
  }
}
