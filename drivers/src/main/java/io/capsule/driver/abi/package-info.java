/**
 * The canonical ABI of the WebAssembly Component Model (CanonicalABI.md), host side, for the utf8
 * string encoding and the value types the driver contract uses.
 *
 * <p>Layers, bottom up:
 *
 * <ul>
 *   <li>{@link io.capsule.driver.abi.WitType} — the type model (bool, u8, s32, u32, u64, f64,
 *       string, list, option, result, record, variant, enum, tuple) with size, alignment and
 *       flattening computed once per type; the Java value of each type is listed there.
 *   <li>{@link io.capsule.driver.abi.CanonicalAbi} — lowering (through the guest's {@code
 *       cabi_realloc}) and lifting (validated) over a {@link io.capsule.driver.wasm.GuestMemory},
 *       to and from memory and flat core values, with the {@code MAX_FLAT_PARAMS}/{@code
 *       MAX_FLAT_RESULTS} rules for a call's parameters and results.
 *   <li>{@link io.capsule.driver.abi.GuestCall} — one call of a lifted function on a {@link
 *       io.capsule.driver.wasm.WasmInstance}: lower, call, lift, post-return; failures become
 *       {@code E-RUN-034} naming the function.
 *   <li>{@link io.capsule.driver.abi.ContractTypes}, {@link io.capsule.driver.abi.ContractCodec},
 *       {@link io.capsule.driver.abi.EventCodec} — {@code murmur:driver/process@0.6.0} in this
 *       model, and the conversions to and from the records of {@code io.capsule.driver.api}.
 * </ul>
 *
 * <p>One deliberate deviation from the spec: lifting a {@code bool} accepts only 0 and 1, where
 * CanonicalABI.md reads any nonzero value as {@code true}. A driver that writes anything else has
 * written garbage, and the host says so ({@code E-RUN-034}) instead of guessing. And one host limit
 * the spec leaves open: the strings and list elements of one lifted result may together cover no
 * more bytes than the guest's memory holds, so a result whose entries all point at one large region
 * (aliasing) cannot make the host copy gigabytes out of a 64 MiB guest.
 *
 * <p>Everything here is a pure core: no threads, no I/O beyond the guest memory it is given, and
 * confined to the thread that owns the instance.
 */
package io.capsule.driver.abi;
