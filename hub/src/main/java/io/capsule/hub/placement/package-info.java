/**
 * Placement: which runner of a project takes which waiting task. Pure (no Pekko, no clocks, no I/O)
 * so the project entity calls it on every change and its rules are tested as tables; see {@link
 * io.capsule.hub.placement.Placement} for the rules.
 */
package io.capsule.hub.placement;
