/*
 * Tries each call the seccomp filter rules on (docs/containment.md, "Syscall filter") and prints
 * one line per try: "<label> <errno>", 0 when the call succeeded. Compiled by SeccompKernelTest
 * at test time and run inside bubblewrap, with and without the filter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *label, long result) {
  printf("%s %d\n", label, result < 0 ? errno : 0);
  fflush(stdout);
}

static void report_fd(const char *label, int fd) {
  report(label, fd);
  if (fd >= 0) close(fd);
}

/* clone() with namespace flags through the raw call; a child that is made exits at once. */
static void try_clone(const char *label, unsigned long flags) {
  long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  report(label, pid);
}

/* The Seccomp: line of /proc/self/status: 0 none, 2 filter. */
static void report_seccomp_mode(void) {
  char line[256];
  int mode = -1;
  FILE *status = fopen("/proc/self/status", "r");
  while (status != NULL && fgets(line, sizeof line, status) != NULL) {
    if (strncmp(line, "Seccomp:", 8) == 0) mode = atoi(line + 8);
  }
  if (status != NULL) fclose(status);
  printf("seccomp-mode %d\n", mode);
}

int main(void) {
  report_seccomp_mode();
  /* Must succeed: what the forwarder and the tools use. */
  report_fd("unix-stream", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  report_fd("inet-stream", socket(AF_INET, SOCK_STREAM, 0));
  report_fd("inet6-dgram", socket(AF_INET6, SOCK_DGRAM, 0));
  int pair[2];
  long r = socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
  report("unix-pair", r);
  if (r == 0) close(pair[0]), close(pair[1]);
  pid_t child = fork();
  if (child == 0) _exit(0);
  if (child > 0) waitpid(child, NULL, 0);
  report("fork", child);
  report("personality-query", personality(0xffffffff));

  /* Must be refused. */
  report_fd("netlink", socket(AF_NETLINK, SOCK_DGRAM, 0));
  report_fd("packet", socket(AF_PACKET, SOCK_DGRAM, 0));
  report_fd("inet-raw", socket(AF_INET, SOCK_RAW, 1));
  report_fd("inet-packet", socket(AF_INET, SOCK_PACKET, 0x0300));
  report_fd("alg", socket(38 /* AF_ALG */, SOCK_SEQPACKET, 0));
  report("netlink-pair", socketpair(AF_NETLINK, SOCK_DGRAM, 0, pair));
  char c = 'x';
  report("tiocsti", ioctl(0, TIOCSTI, &c));
  r = ptrace(PTRACE_ATTACH, 1, 0, 0);
  report("ptrace", r);
  if (r == 0) { /* let pid 1, bwrap's init, go, or the sandbox never ends */
    waitpid(1, NULL, __WALL);
    ptrace(PTRACE_DETACH, 1, 0, 0);
  }
  report("process_vm_readv", syscall(SYS_process_vm_readv, 1, 0, 0, 0, 0, 0));
  report("keyctl", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* session */, 0));
  report("add_key", syscall(SYS_add_key, "user", "probe", "x", 1, -3));
  report("bpf", syscall(SYS_bpf, 0, 0, 0));
  report("perf_event_open", syscall(SYS_perf_event_open, 0, 0, -1, -1, 0));
  report("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */));
  report("io_uring_setup", syscall(SYS_io_uring_setup, 1, 0));
  report("unshare-user", unshare(CLONE_NEWUSER));
  report("unshare-net", unshare(CLONE_NEWNET));
  try_clone("clone-user", CLONE_NEWUSER);
  try_clone("clone-net", CLONE_NEWNET);
  report("clone3", syscall(SYS_clone3, 0, 0));
  report("setns", setns(-1, 0));
  report("mount", mount("none", "/tmp", "tmpfs", 0, 0));
  report("umount2", umount2("/tmp", MNT_DETACH));
  report("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
  report("open_tree", syscall(SYS_open_tree, -100, "/tmp", 0));
  report("personality-unsafe", personality(ADDR_NO_RANDOMIZE));
  report("init_module", syscall(SYS_init_module, 0, 0, ""));
#ifdef __x86_64__
  /* x32: getpid with __X32_SYSCALL_BIT. */
  report("x32", syscall(0x40000000 | SYS_getpid));
  /* i386 through int 0x80 (getpid is 20 there), in a child in case the kernel has no IA32. */
  child = fork();
  if (child == 0) {
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
    _exit(ret < 0 && ret > -4096 ? (int)-ret : 0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("int80 %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status));
#endif
  return 0;
}
