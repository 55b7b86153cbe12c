package io.capsule.hub.runner;

import io.capsule.protocol.frame.Hello;

/** One runner WebSocket as the hub's actor sees it; confined to that actor. */
final class RunnerConn {
  final HubCore.Opened opened;

  /** Set when the hello is accepted. */
  Hello hello;

  /**
   * The hello is accepted but its resume (ack, replay) waits until the runner's sent frames in
   * flight are kept: a replay must never carry a frame the store does not have yet, and nothing may
   * be sent before the replay.
   */
  boolean resumePending;

  int appliedSinceAck;

  RunnerConn(HubCore.Opened opened) {
    this.opened = opened;
  }

  long id() {
    return opened.id();
  }

  boolean has(String capability) {
    return hello != null && hello.hasCapability(capability);
  }

  /** Frames the hub sends may go out now. */
  boolean live() {
    return hello != null && !resumePending;
  }
}
