package io.capsule.bench.runtime;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * A Java driver whose harness is {@code /bin/sh} printing a recorded file as fast as {@code cat}
 * can, then one {@link #END} line. The task text is the file's path.
 *
 * <p>{@code parse} turns each recorded line into one {@link Event.Text} carrying the line. Why
 * {@code text} and not the alternatives: it reaches the listener as one {@code TextCompleted} with
 * the line's bytes, and the run does no per-line work beyond its ledger (no trace record, unlike
 * {@code note}; no growing message, unlike {@code text-delta}, whose {@code soFar} copies the whole
 * message on every delta). So the figure is the runtime's own pipe-to-listener cost, not a driver's
 * parsing (ParseBench measures that) nor trace I/O.
 */
final class CatDriver extends ShDriver {

  /** The harness's last line: the end of the turn. Not a JSON line, so no recorded line is it. */
  static final String END = "__end__";

  CatDriver() {
    super("cat", "exited before " + END);
  }

  @Override
  List<String> shArgs(LaunchRequest request) {
    return List.of("-c", "cat \"$0\" && echo " + END, request.task());
  }

  @Override
  public List<Event> parse(List<String> lines) {
    List<Event> events = new ArrayList<>(lines.size());
    for (String line : lines) {
      events.add(END.equals(line) ? new Event.TurnEnd(END) : new Event.Text(line));
    }
    return events;
  }
}
