package io.capsule.bench.runtime;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.ProcessDriver;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link CatDriver}'s harness (the recorded file printed as fast as {@code cat} can, then {@link
 * CatDriver#END}) with every recorded line parsed by the real built-in {@code claude-code} driver
 * component, so the end-to-end figure includes the sandboxed parse. Only the launch and the end
 * marker are the benchmark's: the component would plan {@code claude} itself.
 */
final class ClaudeComponentDriver extends ShDriver {

  private final ProcessDriver component;

  /**
   * @param component a fresh instance of the loaded {@code claude-code} driver, owned
   */
  ClaudeComponentDriver(ProcessDriver component) {
    super("claude-component", "exited before " + CatDriver.END);
    this.component = component;
  }

  @Override
  List<String> shArgs(LaunchRequest request) {
    return List.of("-c", "cat \"$0\" && echo " + CatDriver.END, request.task());
  }

  @Override
  public List<Event> parse(List<String> lines) {
    int end = lines.indexOf(CatDriver.END);
    List<Event> events = new ArrayList<>(component.parse(end < 0 ? lines : lines.subList(0, end)));
    if (end >= 0) {
      events.add(new Event.TurnEnd(CatDriver.END));
    }
    return events;
  }

  @Override
  public void close() {
    component.close();
  }
}
