package io.capsule.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.manifest.CredentialNames;
import io.capsule.driver.api.LoginState;
import java.util.Collection;
import java.util.Iterator;
import java.util.Optional;
import java.util.TreeSet;

/**
 * What {@code capsule doctor} makes of the driver's login verdict, pure. A login check asks the
 * harness about a <em>saved</em> sign-in ({@code codex login status} says "Not logged in" even with
 * an API key in its environment), while a run also authenticates with an API key or a custom
 * provider's key handed to it in its environment. So "logged out" refuses only when the run's
 * environment carries no credential; otherwise the check cannot answer for this setup, and the
 * doctor says so, as the run would succeed.
 *
 * @param row the doctor's {@code login} row
 * @param refuses whether a run would be refused
 */
record LoginVerdict(String row, boolean refuses) {

  /**
   * @param state the driver's reading of the login check
   * @param shownReason the state's reason, already cut for display
   * @param grantedEnv the variable names the capsule grants the harness
   * @param driverConfig the capsule's driver config (its {@code env} object is the harness's too)
   */
  static LoginVerdict of(
      LoginState state,
      String shownReason,
      Collection<String> grantedEnv,
      Optional<JsonNode> driverConfig) {
    if (state instanceof LoginState.LoggedIn) {
      return new LoginVerdict("logged in", false);
    }
    if (state instanceof LoginState.Unknown) {
      return new LoginVerdict("unknown: " + shownReason, false);
    }
    TreeSet<String> credentials = new TreeSet<>();
    grantedEnv.stream().filter(LoginVerdict::isCredential).forEach(credentials::add);
    JsonNode env = driverConfig.map(c -> c.path("env")).orElse(null);
    if (env != null && env.isObject()) {
      for (Iterator<String> names = env.fieldNames(); names.hasNext(); ) {
        String name = names.next();
        if (isCredential(name)) {
          credentials.add(name);
        }
      }
    }
    if (credentials.isEmpty()) {
      return new LoginVerdict("logged out: " + shownReason, true);
    }
    return new LoginVerdict(
        "no saved login, and none needed: a run authenticates with "
            + String.join(", ", credentials)
            + " from its environment, which the login check does not see",
        false);
  }

  /**
   * A credential-shaped name ({@link CredentialNames}: {@code OPENAI_API_KEY}, a custom provider's
   * {@code env_key} such as {@code FAKE_PROVIDER_KEY}, {@code GOOGLE_APPLICATION_CREDENTIALS}). The
   * runtime's own variables ({@code CAPSULE_BRIDGE_TOKEN}) never are a model credential.
   */
  static boolean isCredential(String name) {
    return CredentialNames.isCredentialShaped(name) && !name.startsWith("CAPSULE_");
  }
}
