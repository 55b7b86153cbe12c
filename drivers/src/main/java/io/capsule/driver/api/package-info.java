/**
 * The {@code murmur:driver@0.6.0} contract as Java types: records for WIT records, enums for WIT
 * enums, sealed interfaces of records for WIT variants.
 *
 * <p>Mapping rules, used the same way everywhere:
 *
 * <ul>
 *   <li>{@code option<T>} is {@link java.util.Optional}{@code <T>}; a record never holds {@code
 *       null}.
 *   <li>{@code list<u8>} is {@code byte[]} (records holding one compare it by content).
 *   <li>{@code u64} is a {@code long} read as <b>unsigned</b>: values above {@link Long#MAX_VALUE}
 *       appear negative; compare with {@link Long#compareUnsigned} and print with {@link
 *       Long#toUnsignedString}. {@code u32} is a {@code long} holding the exact value 0..2^32-1.
 *       {@code s32} is an {@code int}.
 *   <li>{@code result<T, string>} is a small sealed type per use ({@link LaunchResult}).
 * </ul>
 *
 * <p>A driver written in Java implements {@link io.capsule.driver.api.ProcessDriver}; a WASM
 * component is adapted to the same interface, so the runtime cannot tell the two apart.
 */
package io.capsule.driver.api;
