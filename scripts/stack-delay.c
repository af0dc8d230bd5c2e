/*
 * The kernel path a small message crosses, measured (host.stackDelay, docs/scenarios.md#host): a 64-byte
 * UDP ping-pong over loopback between two processes. Each round trip is two sends and two receives
 * through the kernel (system calls, UDP/IP, softirq, waking the receiving process), so a quarter of it
 * is one crossing on one side. Loopback has no NIC (no DMA, no interrupt moderation): a floor.
 *
 *   gcc -O2 -o /tmp/stack-delay scripts/stack-delay.c && /tmp/stack-delay 100000
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static int cmp(const void *a, const void *b) { long long x = *(const long long *)a, y = *(const long long *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in sa = {0}, sb = {0};
  sa.sin_family = sb.sin_family = AF_INET;
  sa.sin_addr.s_addr = sb.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t l = sizeof sa;
  bind(a, (struct sockaddr *)&sa, l); getsockname(a, (struct sockaddr *)&sa, &l);
  bind(b, (struct sockaddr *)&sb, l); getsockname(b, (struct sockaddr *)&sb, &l);
  char buf[64] = {0};
  if (fork() == 0) { /* the echoing side: a reply per request */
    for (int i = 0; i < n; i++) { recv(b, buf, sizeof buf, 0); sendto(b, buf, sizeof buf, 0, (struct sockaddr *)&sa, l); }
    return 0;
  }
  long long *rtt = malloc(sizeof(long long) * n);
  for (int i = 0; i < n; i++) {
    long long t0 = ns();
    sendto(a, buf, sizeof buf, 0, (struct sockaddr *)&sb, l);
    recv(a, buf, sizeof buf, 0);
    rtt[i] = ns() - t0;
  }
  wait(NULL);
  qsort(rtt, n, sizeof *rtt, cmp);
  printf("64-byte UDP round trip over loopback, %d samples: p10 %lld ns, p50 %lld ns, p90 %lld ns\n", n, rtt[n / 10], rtt[n / 2], rtt[n * 9 / 10]);
  return 0;
}
