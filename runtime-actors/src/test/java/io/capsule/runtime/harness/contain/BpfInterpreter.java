package io.capsule.runtime.harness.contain;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Runs a classic-BPF seccomp program the way the kernel does, for the instructions {@link
 * BpfAssembler} emits (pure). {@link #check} applies the kernel's static checks first
 * (kernel/bpf/core.c and net/core/filter.c: length, opcodes, forward jumps in range, loads inside
 * {@code seccomp_data}, a return at the end); {@link #run} refuses an opcode it does not know
 * rather than guessing.
 */
final class BpfInterpreter {

  /** {@code sizeof(struct seccomp_data)}: nr, arch, instruction pointer, six arguments. */
  static final int SECCOMP_DATA_BYTES = 64;

  private final ByteBuffer program;
  private final int length;

  BpfInterpreter(byte[] program) {
    this.program = ByteBuffer.wrap(program).order(ByteOrder.LITTLE_ENDIAN);
    this.length = program.length / BpfAssembler.INSN_BYTES;
    check(program);
  }

  /** The kernel's checks on a seccomp program; throws what it would refuse. */
  static void check(byte[] bytes) {
    if (bytes.length == 0 || bytes.length % BpfAssembler.INSN_BYTES != 0) {
      throw new IllegalArgumentException("not a whole number of instructions");
    }
    ByteBuffer p = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    int n = bytes.length / BpfAssembler.INSN_BYTES;
    if (n > BpfAssembler.MAX_INSNS) {
      throw new IllegalArgumentException(n + " instructions, over BPF_MAXINSNS");
    }
    for (int pc = 0; pc < n; pc++) {
      int code = p.getShort(pc * 8) & 0xffff;
      int jt = p.get(pc * 8 + 2) & 0xff;
      int jf = p.get(pc * 8 + 3) & 0xff;
      int k = p.getInt(pc * 8 + 4);
      switch (code) {
        case BpfAssembler.LD_W_ABS -> {
          if (k < 0 || k > SECCOMP_DATA_BYTES - 4 || k % 4 != 0) {
            throw new IllegalArgumentException("load outside seccomp_data at " + pc);
          }
        }
        case BpfAssembler.JEQ_K, BpfAssembler.JGE_K, BpfAssembler.JSET_K -> {
          if (pc + 1 + Math.max(jt, jf) >= n) {
            throw new IllegalArgumentException("jump past the end at " + pc);
          }
        }
        case BpfAssembler.ALU_AND_K, BpfAssembler.RET_K -> {}
        default -> throw new IllegalArgumentException("unknown opcode " + code + " at " + pc);
      }
    }
    if ((p.getShort((n - 1) * 8) & 0xffff) != BpfAssembler.RET_K) {
      throw new IllegalArgumentException("the program does not end in a return");
    }
  }

  int length() {
    return length;
  }

  /** The action the program returns for a call {@code nr(args)} made under {@code auditArch}. */
  int run(int auditArch, int nr, long... args) {
    ByteBuffer data = ByteBuffer.allocate(SECCOMP_DATA_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    data.putInt(0, nr).putInt(4, auditArch).putLong(8, 0x401000L);
    for (int i = 0; i < args.length; i++) {
      data.putLong(16 + 8 * i, args[i]);
    }
    int a = 0;
    for (int pc = 0; pc < length; pc++) {
      int code = program.getShort(pc * 8) & 0xffff;
      int jt = program.get(pc * 8 + 2) & 0xff;
      int jf = program.get(pc * 8 + 3) & 0xff;
      int k = program.getInt(pc * 8 + 4);
      switch (code) {
        case BpfAssembler.LD_W_ABS -> a = data.getInt(k);
        case BpfAssembler.ALU_AND_K -> a &= k;
        case BpfAssembler.JEQ_K -> pc += a == k ? jt : jf;
        case BpfAssembler.JGE_K -> pc += Integer.compareUnsigned(a, k) >= 0 ? jt : jf;
        case BpfAssembler.JSET_K -> pc += (a & k) != 0 ? jt : jf;
        case BpfAssembler.RET_K -> {
          return k;
        }
        default -> throw new IllegalStateException("unknown opcode " + code + " at " + pc);
      }
    }
    throw new IllegalStateException("ran off the end of the program");
  }
}
