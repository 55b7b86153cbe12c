package io.capsule.bench.runtime;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * A Java driver whose harness says {@link #PARKED} once and then waits, idle, until it is
 * interrupted: an idle parked run. The shell {@code exec}s {@code sleep}, so each run holds exactly
 * one harness process; SIGINT (the interrupt method) ends it.
 */
final class ParkDriver extends ShDriver {

  /** The harness's only line, heard as a {@code note}: the run is parked from then on. */
  static final String PARKED = "parked";

  /** Longer than any benchmark iteration: the harness never ends by itself. */
  private static final String SLEEP_SECONDS = "3600";

  ParkDriver() {
    super("park", "the parked harness ended");
  }

  @Override
  List<String> shArgs(LaunchRequest request) {
    return List.of("-c", "echo " + PARKED + " && exec sleep " + SLEEP_SECONDS);
  }

  @Override
  public List<Event> parse(List<String> lines) {
    List<Event> events = new ArrayList<>(lines.size());
    for (String line : lines) {
      events.add(new Event.Note(line));
    }
    return events;
  }
}
