package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.Await;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.runner.RawRunners;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The hub's web page in a real headless Chromium (Debian's {@code chromium} and {@code
 * chromium-driver}, driven by Selenium) against a real hub and a real runner with real harness
 * processes on loopback: sign in, submit a task and watch its text stream in, cancel a second task,
 * see the runner, see which attempt a task placed again after its runner went away runs as (a hub
 * of its own with a short dead-after and a raw runner that goes away). Screenshots of each page go
 * to {@code target/hub-page/}.
 *
 * <p>Skipped only when Chromium is not installed here; under {@code .ci/run} (which installs it and
 * sets {@code CAPSULE_REQUIRE_BROWSER}) a missing browser fails the test instead.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class HubPageBrowserTest {
  private static final String PROJECT = "web";
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  private static final Path SHOTS = Path.of("target", "hub-page");

  /** A page step waits this long: the runs are short, the machine is shared and slow at times. */
  private static final Duration STEP = Duration.ofSeconds(60);

  @TempDir static Path capsules;

  private CapsuleSettings settings;
  private ActorSystem<Void> hubSystem;
  private ActorSystem<Void> runnerSystem;
  private ReferenceHub hub;
  private RunnerNode runner;
  private String apiToken;
  private ChromeDriverService service;
  private WebDriver browser;

  @BeforeAll
  void start() throws Exception {
    boolean present = Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
    if (!present && System.getenv("CAPSULE_REQUIRE_BROWSER") != null) {
      throw new AssertionError(
          "CAPSULE_REQUIRE_BROWSER is set (.ci/run) but chromium or chromium-driver is missing");
    }
    Assumptions.assumeTrue(
        present, "no Chromium here: apt-get install chromium chromium-driver to run this test");
    TestCapsules.capsule(capsules, "stream", countingHarness(300));
    TestCapsules.capsule(capsules, "slow", TestCapsules.slowHarness());
    TestCapsules.capsule(capsules, "paced", pacedHarness(PACED_WORDS));
    copyClock(capsules);
    settings = CapsuleSettings.load();
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    String runnerToken =
        tokens.issue(PROJECT, Optional.of("runner-a"), TokenScope.RUNNER, Duration.ofMinutes(30));
    apiToken = tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(30));
    hubSystem = ActorSystem.create(Behaviors.empty(), "hub");
    runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
    hub =
        ReferenceHub.start(
                hubSystem, RuntimeWiring.protocol(settings), tokens, PROJECT, "127.0.0.1", 0)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    runner =
        TestCapsules.connectedRunner(
            runnerSystem, settings, hub.runnerUrl(), PROJECT, runnerToken, capsules, n -> {});
    Files.createDirectories(SHOTS);
    // The driver binary is given: Selenium must not look for (or download) one.
    service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .withLogFile(new File("target/hub-page/chromedriver.log"))
            .build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    // --no-sandbox: the tests run as root in a container, where Chromium's sandbox cannot start.
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,900");
    browser = new ChromeDriver(service, options);
  }

  @AfterAll
  void stop() {
    if (browser != null) {
      browser.quit();
    }
    if (service != null) {
      service.stop();
    }
    if (runner != null) {
      runner.close();
    }
    if (hub != null) {
      hub.stop().toCompletableFuture().join();
    }
    if (runnerSystem != null) {
      runnerSystem.terminate();
    }
    if (hubSystem != null) {
      hubSystem.terminate();
    }
  }

  @Test
  @Order(1)
  void signingInKeepsTheTokenInSessionStorageAndOutOfTheUrl() throws Exception {
    browser.get(hub.apiUrl() + "/");
    WebElement field = waitFor(By.id("token"));
    shot("01-sign-in");
    assertFalse(
        browser.findElement(By.id("nav")).isDisplayed(), "no nav (nor Sign out) before sign-in");
    assertEquals("API token", browser.findElement(By.cssSelector("label[for=token]")).getText());
    field.sendKeys(apiToken);
    browser.findElement(By.id("sign-in")).click();
    waitFor(By.id("view-tasks"));
    assertTrue(browser.findElement(By.id("nav")).isDisplayed(), "the nav once signed in");
    assertFalse(browser.getCurrentUrl().contains(apiToken), browser.getCurrentUrl());
    Object stored = js().executeScript("return sessionStorage.getItem('capsule.hub.token')");
    assertEquals(apiToken, stored);
    assertNull(js().executeScript("return localStorage.getItem('capsule.hub.token')"));
  }

  @Test
  @Order(2)
  void aSubmittedTaskStreamsItsTextLiveAndEndsWithItsReport() throws Exception {
    browser.findElement(By.id("nav-submit")).click();
    waitFor(By.id("submit-goal"));
    browser.findElement(By.id("submit-capsule")).sendKeys("stream");
    browser.findElement(By.id("submit-goal")).sendKeys("count for me");
    browser.findElement(By.id("submit-id")).sendKeys("t-web-stream");
    shot("02-submit");
    browser.findElement(By.id("submit")).click();
    new WebDriverWait(browser, STEP)
        .until(ExpectedConditions.textToBePresentInElementLocated(By.id("transcript"), "w1 w2"));
    new WebDriverWait(browser, STEP)
        .until(ExpectedConditions.visibilityOfElementLocated(By.id("report")));
    String streamed = browser.findElement(By.id("transcript")).getText();
    assertTrue(streamed.startsWith("w1 w2 w3"), streamed);
    assertTrue(streamed.endsWith(" w300"), "every delta arrived, in order: " + tail(streamed));
    assertTrue(
        browser.findElement(By.id("report-facts")).getText().contains("done"),
        browser.findElement(By.id("report-facts")).getText());
    assertFalse(browser.findElement(By.id("cancel")).isDisplayed(), "no Cancel on a finished task");
    shot("03-task-done");
  }

  @Test
  @Order(3)
  void aRunningTaskIsCanceledFromItsPage() throws Exception {
    browser.findElement(By.id("nav-submit")).click();
    waitFor(By.id("submit-goal"));
    browser.findElement(By.id("submit-capsule")).sendKeys("slow");
    browser.findElement(By.id("submit-goal")).sendKeys("take your time");
    browser.findElement(By.id("submit-id")).sendKeys("t-web-slow");
    browser.findElement(By.id("submit")).click();
    new WebDriverWait(browser, STEP)
        .until(ExpectedConditions.textToBePresentInElementLocated(By.id("transcript"), "working"));
    shot("04-task-running");
    browser.findElement(By.id("cancel")).click();
    new WebDriverWait(browser, STEP)
        .until(ExpectedConditions.visibilityOfElementLocated(By.id("report")));
    String report = browser.findElement(By.id("report-facts")).getText();
    assertTrue(report.contains("failed") && report.contains("canceled"), report);
    shot("05-task-canceled");
  }

  @Test
  @Order(4)
  void theRunnersViewShowsTheConnectedRunnerWithItsCapsulesAndSlots() throws Exception {
    browser.findElement(By.id("nav-runners")).click();
    waitFor(By.cssSelector("#runners tr[data-runner='runner-a']"));
    String text = textOf(By.cssSelector("#runners tr[data-runner='runner-a']"));
    assertTrue(text.contains("yes"), text);
    assertTrue(text.contains("slow") && text.contains("stream"), text);
    assertTrue(text.contains("4"), "four slots: " + text);
    shot("06-runners");
  }

  @Test
  @Order(5)
  void theTaskListShowsBothTasksWithTheirOutcomesAndFilters() throws Exception {
    browser.findElement(By.id("nav-tasks")).click();
    waitFor(By.cssSelector("#tasks tr[data-task='t-web-stream']"));
    new WebDriverWait(browser, STEP)
        .until(
            ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector("#tasks tr[data-task='t-web-slow']"), "canceled"));
    String row = cellText("t-web-stream", null);
    assertTrue(row.contains("done"), row);
    assertEquals(
        List.of("t-web-slow", "t-web-stream"),
        new WebDriverWait(browser, STEP)
            .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
            .until(
                b ->
                    b.findElements(By.cssSelector("#tasks tbody tr")).stream()
                        .map(r -> r.getDomAttribute("data-task"))
                        .filter(id -> id.equals("t-web-slow") || id.equals("t-web-stream"))
                        .toList()),
        "newest first: the later task above the earlier one");
    assertTrue(
        cellText("t-web-stream", "Age").matches("\\d+ (s|min)"),
        "the age comes from the API's created_at: " + row);
    JsonNode usage =
        new HubApiClient(hub.apiUrl(), apiToken).get("/v1/tasks/t-web-stream").at("/report/usage");
    long total = 0;
    for (JsonNode n : usage) {
      total += n.asLong();
    }
    assertTrue(total > 0, usage.toString());
    assertEquals(
        Long.toString(total),
        cellText("t-web-stream", "Tokens"),
        "the list's tokens are the report's usage, summed");
    shot("07-tasks");
    browser.findElement(By.id("filter-text")).sendKeys("slow");
    // The list re-renders as tasks change: the one row is read inside the wait, again when the
    // row found was replaced before its attribute was read (a stale element failed CI once).
    assertEquals(
        "t-web-slow",
        new WebDriverWait(browser, STEP)
            .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
            .until(
                b -> {
                  java.util.List<org.openqa.selenium.WebElement> rows =
                      b.findElements(By.cssSelector("#tasks tbody tr"));
                  return rows.size() == 1 ? rows.get(0).getDomAttribute("data-task") : null;
                }));
    // On a phone's width the same list stays readable: every cell carries its column's name.
    browser.findElement(By.id("filter-text")).clear();
    browser.manage().window().setSize(new org.openqa.selenium.Dimension(390, 844));
    waitFor(By.cssSelector("#tasks tr[data-task='t-web-stream'] td[data-label='Outcome']"));
    shot("08-tasks-phone");
  }

  /**
   * The README's example capsule with a bridged tool ({@code examples/clock}), run by the runner:
   * its one tool call is listed once on the task's page, and its answer carries the tool's output.
   */
  @Test
  @Order(8)
  void aBridgedToolCallIsListedOnceOnTheTaskPage() throws Exception {
    browser.manage().window().setSize(new org.openqa.selenium.Dimension(1280, 900));
    browser.get(hub.apiUrl() + "/#/submit");
    waitFor(By.id("submit-goal"));
    browser.findElement(By.id("submit-capsule")).sendKeys("clock");
    browser.findElement(By.id("submit-goal")).sendKeys("What time is it?");
    browser.findElement(By.id("submit-id")).sendKeys("t-web-clock");
    browser.findElement(By.id("submit")).click();
    new WebDriverWait(browser, STEP)
        .until(ExpectedConditions.visibilityOfElementLocated(By.id("report")));
    String report = browser.findElement(By.id("report-facts")).getText();
    assertTrue(report.contains("done") && report.contains("It is "), report);
    String events = browser.findElement(By.id("events")).getText();
    assertEquals(1, FirstHourCapsules.count(events, "date called"), events);
    assertFalse(events.contains("through the bridge"), events);
    assertFalse(browser.findElement(By.id("cancel")).isDisplayed(), "no Cancel once finished");
    shot("10-tool-call");
  }

  /**
   * The text of a task's row in the list (its cell {@code label}'s, or the whole row's for null),
   * read afresh: the list replaces its rows every few seconds, so a row found earlier can be gone
   * by the time it is read (a stale element failed CI once).
   */
  private String cellText(String taskId, String label) {
    By by =
        By.cssSelector(
            "#tasks tr[data-task='"
                + taskId
                + "']"
                + (label == null ? "" : " td[data-label='" + label + "']"));
    return textOf(by);
  }

  /** An element's text, found again if the page replaced it between finding and reading. */
  private String textOf(By by) {
    return new WebDriverWait(browser, STEP)
        .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
        .until(b -> b.findElement(by).getText());
  }

  @Test
  @Order(6)
  void aTaskPageResumesAfterItsEventStreamIsCutWithoutRepeatingAWord() throws Exception {
    browser.manage().window().setSize(new org.openqa.selenium.Dimension(1280, 900));
    // The page on a second address, through a forwarder the test can cut: a real network cut
    // under the page's open event stream (the token is per origin: sign in there too).
    try (CuttableProxy proxy = new CuttableProxy(hub.address().getPort())) {
      browser.get("http://127.0.0.1:" + proxy.port() + "/");
      waitFor(By.id("token")).sendKeys(apiToken);
      browser.findElement(By.id("sign-in")).click();
      waitFor(By.id("view-tasks"));
      browser.findElement(By.id("nav-submit")).click();
      waitFor(By.id("submit-goal"));
      browser.findElement(By.id("submit-capsule")).sendKeys("paced");
      browser.findElement(By.id("submit-goal")).sendKeys("say your words slowly");
      browser.findElement(By.id("submit-id")).sendKeys("t-web-cut");
      browser.findElement(By.id("submit")).click();
      new WebDriverWait(browser, STEP)
          .until(
              ExpectedConditions.textToBePresentInElementLocated(By.id("transcript"), "p1 p2 p3"));
      proxy.cut(); // the open stream ends mid-task
      proxy.heal(); // and the page's next attempt gets through
      new WebDriverWait(browser, STEP)
          .until(
              ExpectedConditions.textToBePresentInElementLocated(
                  By.id("status"), "resumed after event"));
      new WebDriverWait(browser, STEP)
          .until(ExpectedConditions.visibilityOfElementLocated(By.id("report")));
      String streamed = browser.findElement(By.id("transcript")).getText();
      List<String> expected = new ArrayList<>();
      for (int i = 1; i <= PACED_WORDS; i++) {
        expected.add("p" + i);
      }
      assertEquals(expected, List.of(streamed.trim().split("\\s+")), "each word once, in order");
      shot("09-task-resumed");
    }
  }

  @Test
  @Order(7)
  void aTaskPlacedAgainAfterItsRunnerWentAwayShowsItsAttemptInTheListAndOnItsPage()
      throws Exception {
    String project = "web-again";
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    // A hub of its own whose dead-after is 3 s, so the runner that goes away is given up soon.
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "hub-again");
    ReferenceHub again = null;
    RunnerNode real = null;
    try {
      again =
          ReferenceHub.start(
                  system,
                  RuntimeWiring.protocol(settings).toBuilder()
                      .heartbeatIdle(Duration.ofSeconds(1))
                      .deadAfter(Duration.ofSeconds(3))
                      .build(),
                  tokens,
                  project,
                  "127.0.0.1",
                  0)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      // A raw runner takes the task's first attempt and goes away with it.
      RawRunners.Peer gone =
          RawRunners.helloSignedIn(
              system,
              again.runnerUrl(),
              tokens.issue(
                  project, Optional.of("runner-gone"), TokenScope.RUNNER, Duration.ofMinutes(30)),
              project,
              "paced");
      String api = tokens.issue(project, Optional.empty(), TokenScope.API, Duration.ofMinutes(30));
      HubApiClient client = new HubApiClient(again.apiUrl(), api);
      client.submit("{\"capsule\":\"paced\",\"goal\":\"again\",\"id\":\"t-web-again\"}");
      gone.await(s -> s.contains("task.assign"));
      real =
          TestCapsules.connectedRunner(
              runnerSystem,
              settings,
              again.runnerUrl(),
              project,
              tokens.issue(
                  project, Optional.of("runner-b"), TokenScope.RUNNER, Duration.ofMinutes(30)),
              capsules,
              n -> {});
      gone.cut();
      JsonNode placed =
          Await.until(
              () -> client.get("/v1/tasks/t-web-again"),
              t -> t.path("attempt").asInt() == 2,
              STEP,
              "t-web-again placed again on runner-b");
      assertEquals("t-web-again~attempt-2", placed.get("attempt_id").asText(), placed.toString());

      browser.get(again.apiUrl() + "/");
      waitFor(By.id("token")).sendKeys(api);
      browser.findElement(By.id("sign-in")).click();
      assertEquals("2", cellText("t-web-again", "Attempt"));
      shot("10-tasks-attempt");
      new WebDriverWait(browser, STEP)
          .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
          .until(
              b -> {
                b.findElement(By.cssSelector("#tasks tr[data-task='t-web-again'] a")).click();
                return true;
              });
      new WebDriverWait(browser, STEP)
          .until(
              ExpectedConditions.textToBePresentInElementLocated(
                  By.id("task-facts"), "2 (runs as t-web-again~attempt-2)"));
      new WebDriverWait(browser, STEP)
          .until(ExpectedConditions.visibilityOfElementLocated(By.id("report")));
      assertTrue(
          browser.findElement(By.id("report-facts")).getText().contains("done"),
          browser.findElement(By.id("report-facts")).getText());
      shot("11-task-attempt");
    } finally {
      if (real != null) {
        real.close();
      }
      if (again != null) {
        again.stop().toCompletableFuture().join();
      }
      system.terminate();
    }
  }

  private static final int PACED_WORDS = 30;

  /** Says {@code n} words a fifth of a second apart: a stream long enough to be cut mid-way. */
  static String pacedHarness(int n) {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "i=1; text=''\n"
        + "while [ $i -le "
        + n
        + " ]; do\n"
        + "  w=\"p$i\"; [ $i -gt 1 ] && w=\" p$i\"\n"
        + "  printf '{\"type\":\"delta\",\"text\":\"%s\"}\\n' \"$w\"; text=\"$text$w\"\n"
        + "  sleep 0.2; i=$((i+1))\n"
        + "done\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\"}\\n' \"$text\"\n";
  }

  /**
   * Streams {@code n} one-word deltas, then the whole text as the result with a usage split, so the
   * pages have tokens to show.
   */
  static String countingHarness(int n) {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "i=1; text=''\n"
        + "while [ $i -le "
        + n
        + " ]; do\n"
        + "  w=\"w$i\"; [ $i -gt 1 ] && w=\" w$i\"\n"
        + "  printf '{\"type\":\"delta\",\"text\":\"%s\"}\\n' \"$w\"; text=\"$text$w\"\n"
        + "  [ $((i % 20)) -eq 0 ] && sleep 0.05\n"
        + "  i=$((i+1))\n"
        + "done\n"
        + "printf '{\"type\":\"result\",\"text\":\"%s\",\"usage\":{\"fresh_input\":120,"
        + "\"cache_read\":30,\"cache_write\":10,\"output\":45,\"thinking\":5}}\\n' \"$text\"\n";
  }

  /** The README's bridged-tool example, as a runner's capsule folder {@code clock}. */
  private static void copyClock(Path capsules) throws IOException {
    Path from = Cli.ROOT.resolve("examples/clock");
    Path dir = Files.createDirectories(capsules.resolve("clock/harness"));
    Files.copy(from.resolve("murmur.yaml"), capsules.resolve("clock/murmur.yaml"));
    Files.copy(from.resolve("harness/agent.sh"), dir.resolve("agent.sh"));
    Files.setPosixFilePermissions(
        dir.resolve("agent.sh"),
        java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
  }

  private WebElement waitFor(By by) {
    return new WebDriverWait(browser, STEP)
        .until(ExpectedConditions.visibilityOfElementLocated(by));
  }

  private JavascriptExecutor js() {
    return (JavascriptExecutor) browser;
  }

  private void shot(String name) throws Exception {
    Path png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
    Files.copy(png, SHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    Files.delete(png);
  }

  private static String tail(String s) {
    return s.length() <= 80 ? s : "…" + s.substring(s.length() - 80);
  }
}
