package io.capsule.config.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The shapes of grants: network entries, harness paths, credential names (spec tables). */
class GrantShapesTest {

  @ParameterizedTest(name = "{0} parses as {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          api.anthropic.com:443 | api.anthropic.com:443
          API.Example.COM       | api.example.com
          *.github.com          | *.github.com
          *.github.com:22       | *.github.com:22
          localhost:8080        | localhost:8080
          10.0.0.1:65535        | 10.0.0.1:65535
          https://api.example.com        | api.example.com:443
          HTTPS://API.example.com/       | api.example.com:443
          http://api.example.com         | api.example.com:80
          https://api.example.com:8443   | api.example.com:8443
          http://localhost:8080          | localhost:8080
          https://*.example.com          | *.example.com:443
          """)
  void networkEntriesParseAndNormalize(String text, String normalized) {
    assertEquals(normalized, NetworkEntry.parse(text).toString());
  }

  @ParameterizedTest(name = "''{0}'' is refused")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ''
          api.example.com:0
          api.example.com:65536
          api.example.com:http
          *.
          *
          a..b
          -bad.example.com
          [::1]:443
          host:
          foo.*.com
          under_score.com
          """)
  void malformedNetworkEntriesAreRefused(String text) {
    assertThrows(IllegalArgumentException.class, () -> NetworkEntry.parse(text));
  }

  @ParameterizedTest(name = "''{0}'' is refused: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          https://api.example.com/v1           | has a path, query or fragment; network.allow grants a host and port only: write the origin, e.g. https://api.example.com
          https://api.example.com?x=1          | has a path, query or fragment
          http://api.example.com#top           | e.g. http://api.example.com
          https://user:secret@api.example.com  | carries user-info (user@ or user:password@); keep credentials out of the manifest and write https://api.example.com
          ftp://files.example.com              | only https:// and http:// URLs are understood; or write host:port
          https://                             | expected host[:port] or *.domain[:port]
          https://api.example.com:99999        | outside 1-65535
          """)
  void urlEntriesBeyondAnOriginAreRefusedSayingWhatToWrite(String text, String says) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> NetworkEntry.parse(text));
    org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains(says), e.getMessage());
  }

  @ParameterizedTest(name = "{0} covers {1}: {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          api.example.com       | api.example.com:443   | true
          api.example.com:443   | api.example.com:443   | true
          api.example.com:443   | api.example.com:80    | false
          api.example.com:443   | api.example.com       | false
          api.example.com       | example.com           | false
          *.example.com         | api.example.com:443   | true
          *.example.com         | a.b.example.com       | true
          *.example.com         | example.com           | false
          *.example.com         | badexample.com        | false
          *.example.com         | *.example.com         | true
          *.example.com         | *.a.example.com       | true
          api.example.com       | *.example.com         | false
          *.example.com:443     | api.example.com:8443  | false
          https://api.example.com | api.example.com:443 | true
          https://api.example.com | api.example.com:80  | false
          http://api.example.com  | api.example.com:80  | true
          """)
  void aNetworkGrantCoversOnlyWhatItNames(String grant, String need, boolean covers) {
    assertEquals(covers, NetworkEntry.parse(grant).covers(NetworkEntry.parse(need)));
  }

  @ParameterizedTest(name = "{0} normalizes to {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ~/.claude      | ~/.claude
          ~/.claude/     | ~/.claude
          /etc/ssl//     | /etc/ssl
          /              | /
          ~/a/b          | ~/a/b
          """)
  void harnessPathsNormalize(String path, String normalized) {
    assertEquals(normalized, HarnessPath.normalize(path));
  }

  @ParameterizedTest(name = "''{0}'' is refused")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ''
          relative/dir
          ~
          ~/
          ~user/x
          /etc/../root
          ~/a/./b
          /a//b
          """)
  void malformedHarnessPathsAreRefused(String path) {
    assertThrows(IllegalArgumentException.class, () -> HarnessPath.normalize(path));
  }

  @ParameterizedTest(name = "{0} ({1}) covers {2} ({3}): {4}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ~/.claude | read-write | ~/.claude          | read       | true
          ~/.claude | read-write | ~/.claude/sessions | read-write | true
          ~/.claude | read       | ~/.claude          | read-write | false
          ~/.claude | read       | ~/.claude.json     | read       | false
          ~/.claude | read       | /home/u/.claude    | read       | false
          /         | read       | /etc/hosts         | read       | true
          /etc      | read       | /etcetera          | read       | false
          """)
  void aPathGrantCoversItselfAndBelowAtItsAccess(
      String grant, String grantAccess, String need, String needAccess, boolean covers) {
    assertEquals(
        covers, new HarnessPath(grant, access(grantAccess)).covers(need, access(needAccess)));
  }

  private static Access access(String yaml) {
    return yaml.equals("read") ? Access.READ : Access.READ_WRITE;
  }

  @ParameterizedTest(name = "{0} is credential-shaped: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ANTHROPIC_API_KEY              | true
          openai_api_key                 | true
          AWS_SECRET_ACCESS_KEY          | true
          OPENAI_KEY                     | true
          GITHUB_TOKEN                   | true
          CLIENT_SECRET                  | true
          DB_PASSWORD                    | true
          PGPASSWORD                     | true
          DB_PASSWORD_FILE               | true
          MYSQL_PASSWD                   | true
          GOOGLE_APPLICATION_CREDENTIALS | true
          TOKEN                          | true
          API_KEY                        | true
          MYSQL_PWD                      | true
          PGPASS                         | true
          PGPASSFILE                     | true
          SMTP_PASS                      | true
          KUBECONFIG                     | true
          kubeconfig                     | true
          DATABASE_URL                   | true
          ANALYTICS_DATABASE_URL         | true
          SENTRY_DSN                     | true
          SSH_AUTH_SOCK                  | true
          NETRC                          | true
          DOCKER_AUTH_CONFIG             | true
          SSH_KEY_FILE                   | true
          TLS_PRIVATE_KEY_PATH           | true
          CLIENT_SECRET_FILE             | true
          GITHUB_TOKEN_FILE              | true
          APIKEY                         | true
          STRIPE_APIKEY                  | true
          HOME                           | false
          PWD                            | false
          OLDPWD                         | false
          USER                           | false
          SHELL                          | false
          BYPASS_PROXY                   | false
          COMPASS_HOME                   | false
          MONKEY                         | false
          KEYMAP                         | false
          CONFIG_FILE                    | false
          LD_LIBRARY_PATH                | false
          MANPATH                        | false
          KUBE_NAMESPACE                 | false
          SSH_AGENT_PID                  | false
          DATABASE_NAME                  | false
          XDG_CONFIG_HOME                | false
          PATH                           | false
          LANG                           | false
          TERM                           | false
          KEYBOARD_LAYOUT                | false
          TOKENIZERS_PARALLELISM         | false
          SECRETARY                      | false
          """)
  void credentialNamesFollowTheShapeRule(String name, boolean credential) {
    assertEquals(credential, CredentialNames.isCredentialShaped(name));
  }
}
