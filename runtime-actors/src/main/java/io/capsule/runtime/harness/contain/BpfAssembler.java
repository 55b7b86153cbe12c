package io.capsule.runtime.harness.contain;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A classic-BPF program under construction (pure; not thread-safe): instructions in order, jump
 * targets named by labels and resolved by {@link #assemble()}. Only what a seccomp filter needs:
 * load a word of {@code seccomp_data}, AND a constant, compare, return. Jumps only go forward
 * (classic BPF has no backward jumps) by at most 255 instructions (the jump fields are one byte
 * each); {@link #assemble()} refuses anything else, so a malformed program never reaches the
 * kernel.
 */
final class BpfAssembler {

  // Opcodes, from include/uapi/linux/filter.h and bpf_common.h.
  static final int LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
  static final int ALU_AND_K = 0x54; // BPF_ALU | BPF_AND | BPF_K
  static final int JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
  static final int JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K (unsigned)
  static final int JSET_K = 0x45; // BPF_JMP | BPF_JSET | BPF_K (A & k != 0)
  static final int RET_K = 0x06; // BPF_RET | BPF_K

  /** The kernel's BPF_MAXINSNS: a longer classic program is refused. */
  static final int MAX_INSNS = 4096;

  /** Bytes per {@code struct sock_filter}: u16 code, u8 jt, u8 jf, u32 k. */
  static final int INSN_BYTES = 8;

  /**
   * One instruction; a jump goes to {@code target} when its test holds and on otherwise ({@code
   * null}: not a jump).
   */
  private record Insn(int code, String target, int k) {}

  private final List<Insn> insns = new ArrayList<>();
  private final Map<String, Integer> labels = new HashMap<>();

  /** A = the 32-bit word at {@code offset} in {@code seccomp_data}. */
  BpfAssembler load(int offset) {
    return add(new Insn(LD_W_ABS, null, offset));
  }

  /** A = A & k. */
  BpfAssembler and(int k) {
    return add(new Insn(ALU_AND_K, null, k));
  }

  /** Go to {@code target} when A == k, else on. */
  BpfAssembler jumpIfEqual(int k, String target) {
    return add(new Insn(JEQ_K, target, k));
  }

  /** Go to {@code target} when A >= k (unsigned), else on. */
  BpfAssembler jumpIfAtLeast(int k, String target) {
    return add(new Insn(JGE_K, target, k));
  }

  /** Go to {@code target} when A has any bit of k set, else on. */
  BpfAssembler jumpIfAnySet(int k, String target) {
    return add(new Insn(JSET_K, target, k));
  }

  /** End the program with {@code action} (a {@code SECCOMP_RET_*} value). */
  BpfAssembler ret(int action) {
    return add(new Insn(RET_K, null, action));
  }

  /** Name the next instruction. */
  BpfAssembler label(String name) {
    if (labels.putIfAbsent(name, insns.size()) != null) {
      throw new IllegalStateException("label " + name + " defined twice");
    }
    return this;
  }

  /** The program as {@code struct sock_filter[]}, little-endian (x86_64 and aarch64 both are). */
  byte[] assemble() {
    if (insns.isEmpty() || insns.get(insns.size() - 1).code() != RET_K) {
      throw new IllegalStateException("a BPF program must end in a return");
    }
    if (insns.size() > MAX_INSNS) {
      throw new IllegalStateException(insns.size() + " instructions, over BPF_MAXINSNS");
    }
    ByteBuffer out = ByteBuffer.allocate(insns.size() * INSN_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    for (int pc = 0; pc < insns.size(); pc++) {
      Insn insn = insns.get(pc);
      out.putShort((short) insn.code());
      out.put((byte) offset(pc, insn.target())); // jt
      out.put((byte) 0); // jf: every test falls through when false
      out.putInt(insn.k());
    }
    return out.array();
  }

  /** The jump field for a jump from {@code pc} to {@code label}: instructions skipped. */
  private int offset(int pc, String label) {
    if (label == null) {
      return 0;
    }
    Integer target = labels.get(label);
    if (target == null || target >= insns.size()) {
      throw new IllegalStateException("label " + label + " names no instruction");
    }
    int skip = target - (pc + 1);
    if (skip < 0 || skip > 255) {
      throw new IllegalStateException("jump from " + pc + " to " + label + " out of range");
    }
    return skip;
  }

  private BpfAssembler add(Insn insn) {
    insns.add(insn);
    return this;
  }
}
