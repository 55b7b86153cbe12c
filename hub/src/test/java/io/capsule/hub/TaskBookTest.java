package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.hub.events.LocalFeed;
import io.capsule.hub.events.TaskEntry;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.protocol.frame.TaskProgress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The book's memory of a task's events: without a store it keeps them (its events endpoint has no
 * other source); with one it only counts them (the store serves them), except the closing report of
 * a task that ended without a runner, which no journal has. Live subscribers hear every event
 * either way.
 */
class TaskBookTest {

  @ParameterizedTest(name = "keeps logs {0}: history after 1 is {1}")
  @CsvSource({"true, 2 3", "false, -"})
  void keepsEventsOnlyWithoutAStoreAndCountsThemAlways(boolean keepsLogs, String history) {
    TaskBook book = new TaskBook(keepsLogs);
    TaskBook.Task task =
        new TaskBook.Task(
            "t-1", "alpha", new RunnerKey("p", "r"), JsonNodeFactory.instance.objectNode());
    book.add(task);
    List<TaskEntry> heard = new ArrayList<>();
    LocalFeed.Subscription early = task.subscribe(0, !keepsLogs, heard::add);
    for (long seq = 1; seq <= 3; seq++) {
      book.progress(
          new TaskProgress("t-1", "text", JsonNodeFactory.instance.objectNode().put("i", seq))
              .withSeq(seq));
    }
    assertEquals(3, task.summary().get("events").asInt());
    assertEquals(3, heard.size(), "the live subscriber heard every event");
    early.cancel().run();

    List<String> ids =
        task.subscribe(1, !keepsLogs, e -> {}).history().stream()
            .map(e -> Long.toString(e.id()))
            .toList();
    assertEquals(history.equals("-") ? List.of() : List.of(history.split(" ")), ids);
  }

  @ParameterizedTest(name = "keeps logs {0}")
  @CsvSource({"true", "false"})
  void theReportOfATaskThatNeverReachedARunnerIsKeptEitherWay(boolean keepsLogs) {
    TaskBook book = new TaskBook(keepsLogs);
    TaskBook.Task task =
        TaskBook.Task.queued("t-q", "alpha", JsonNodeFactory.instance.objectNode(), "no runner");
    book.add(task);
    task.endUnplaced("canceled", "canceled while queued");
    List<TaskEntry> history = task.subscribe(0, !keepsLogs, e -> {}).history();
    assertEquals(1, history.size());
    assertEquals("report", history.get(0).event());
  }

  @Test
  void aTaskIsPushedToOtherNodesOnlyFromTheMomentAWatcherAskedForIt() {
    TaskBook book = new TaskBook(false);
    List<Long> pushed = new ArrayList<>();
    book.publishTo((id, e) -> pushed.add(e.id()));
    TaskBook.Task task = task(book, "t-1");
    progress(book, "t-1", 1);
    assertEquals(List.of(), pushed, "nobody asked: the event is not serialized nor sent");

    task.subscribe(1, true, e -> {}).cancel().run(); // a watcher's look-up at the brain
    progress(book, "t-1", 2);
    progress(book, "t-1", 3);
    assertEquals(List.of(2L, 3L), pushed, "every event after the look-up is pushed");
  }

  @Test
  void aRestoredBooksTasksArePushedUnasked() {
    TaskBook book = new TaskBook(false);
    List<String> pushed = new ArrayList<>();
    book.publishTo((id, e) -> pushed.add(id + ":" + e.id()));
    task(book, "t-1");
    progress(book, "t-1", 1);
    book.pushAll(); // the brain moved: watchers on other nodes asked the old one
    task(book, "t-2");
    progress(book, "t-1", 2);
    progress(book, "t-2", 1);
    assertEquals(List.of("t-1:2"), pushed, "the tasks held then, not one added after");
  }

  private static TaskBook.Task task(TaskBook book, String id) {
    TaskBook.Task task =
        new TaskBook.Task(
            id, "alpha", new RunnerKey("p", "r"), JsonNodeFactory.instance.objectNode());
    book.add(task);
    return task;
  }

  private static void progress(TaskBook book, String id, long seq) {
    book.progress(
        new TaskProgress(id, "text", JsonNodeFactory.instance.objectNode().put("i", seq))
            .withSeq(seq));
  }
}
