/**
 * The hub's HTTP edge below the routes: {@link io.capsule.hub.http.GuardedBinding} binds the task
 * API, SSE and the runner WebSocket endpoint so that slow and idle connections cannot lock anyone
 * out (a head deadline, a per-address limit and a total cap, all refusing at once with {@code
 * E-HTTP-001..003}); {@code ConnectionLimits} is its pure bookkeeping.
 *
 * <p>Use: {@code GuardedBinding.bind(system, host, port, route,
 * GuardedBinding.Limits.fromConfig(system.settings().config()))}. Settings: {@code
 * capsule.hub.http.*} in the hub's {@code reference.conf}, each with its reason.
 *
 * <p>What is guaranteed: a connection that has not delivered a complete request head within {@code
 * header-timeout} of opening (or of the first byte of a later request) is closed; no address holds
 * more than its share; the server never holds more than its cap and never leaves a connection
 * waiting unseen because it is full. What is not: a flood of new connections still costs accept
 * work (about 100 connections/s were accepted at a load average of 20 on this 2-core machine, and
 * every refusal is one of them), so a normal client may wait in the kernel's accept queue behind it
 * (0.1-1.2 s measured under 2,000 slow connections); a distributed attacker with as many addresses
 * as the cap allows can still fill the server, each of its connections for at most the head
 * deadline; and a client that pipelines a request while a long response (SSE) is streaming has that
 * request's head deadline running while it waits.
 */
package io.capsule.hub.http;
