// A machine with dearer wakeups, emulated on this one (docs/testing.md, Budget): an LD_PRELOAD shim under
// which every datagram sent or received on a datagram socket costs WAKEUP_TAX_NS more CPU (a spin in
// sendmsg/sendmmsg/sendto/recvmsg/recvmmsg), and with WAKEUP_LATENCY_NS, the first datagram read after a
// socket ran dry (a wakeup) is handled that much later (a sleep). A measuring aid, not part of dcemu:
//
//   gcc -O2 -shared -fPIC -o /tmp/wakeup-tax.so scripts/wakeup-tax.c -ldl
//   LD_PRELOAD=/tmp/wakeup-tax.so WAKEUP_TAX_NS=27000 npx vitest run
//
// Containers do not see it (their image has no such file).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <errno.h>
#include <sys/prctl.h>

static long lat = -1;
static int woke = 1;
static void lat_init(void) {
  if (lat < 0) {
    const char *s = getenv("WAKEUP_LATENCY_NS");
    lat = s ? atol(s) : 0;
    if (lat > 0) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  }
}

static long tax = -1;
static void init(void) {
  if (tax < 0) {
    const char *s = getenv("WAKEUP_TAX_NS");
    tax = s ? atol(s) : 0;
  }
}
static int is_dgram(int fd) {
  int t = 0;
  socklen_t l = sizeof t;
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &l) == 0 && t == SOCK_DGRAM;
}
static void spin(long ns) {
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  for (;;) {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    if ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) >= ns) return;
  }
}
ssize_t sendmsg(int fd, const struct msghdr *m, int f) {
  static ssize_t (*real)(int, const struct msghdr *, int);
  if (!real) real = dlsym(RTLD_NEXT, "sendmsg");
  init();
  ssize_t r = real(fd, m, f);
  if (tax > 0 && r >= 0 && is_dgram(fd)) spin(tax);
  return r;
}
int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int f) {
  static int (*real)(int, struct mmsghdr *, unsigned int, int);
  if (!real) real = dlsym(RTLD_NEXT, "sendmmsg");
  init();
  int r = real(fd, v, n, f);
  if (tax > 0 && r > 0 && is_dgram(fd)) spin(tax * r);
  return r;
}
ssize_t sendto(int fd, const void *b, size_t len, int f, const struct sockaddr *a, socklen_t al) {
  static ssize_t (*real)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
  if (!real) real = dlsym(RTLD_NEXT, "sendto");
  init();
  ssize_t r = real(fd, b, len, f, a, al);
  if (tax > 0 && r >= 0 && is_dgram(fd)) spin(tax);
  return r;
}
ssize_t recvmsg(int fd, struct msghdr *m, int f) {
  static ssize_t (*real)(int, struct msghdr *, int);
  if (!real) real = dlsym(RTLD_NEXT, "recvmsg");
  init();
  lat_init();
  ssize_t r = real(fd, m, f);
  if (lat > 0 && is_dgram(fd)) {
    // the first datagram read after the socket ran dry: a wakeup; it is handled `lat` later
    if (r >= 0 && woke) {
      struct timespec d = {lat / 1000000000L, lat % 1000000000L};
      nanosleep(&d, NULL);
      woke = 0;
    } else if (r < 0 && errno == EAGAIN) {
      woke = 1;
    }
  }
  if (tax > 0 && r >= 0 && is_dgram(fd)) spin(tax);
  return r;
}
int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int f, struct timespec *t) {
  static int (*real)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
  if (!real) real = dlsym(RTLD_NEXT, "recvmmsg");
  init();
  int r = real(fd, v, n, f, t);
  if (tax > 0 && r > 0 && is_dgram(fd)) spin(tax * r);
  return r;
}
