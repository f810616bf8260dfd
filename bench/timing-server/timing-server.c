/*
 * lm-bench's exact-timing server for the load-runner accuracy bench (bench/loadgen-accuracy.ts).
 *
 * An OpenAI-compatible /v1/completions endpoint that streams `max_tokens` SSE token chunks: the first
 * `--ttft-ms` after the request's last byte arrived (the kernel's receive timestamp), then one every
 * `--itl-ms`, each due time fixed
 * from the first one (no drift), then a usage chunk and [DONE]. It is written in C on epoll and one
 * timerfd (nanosecond deadlines) so that on a 2-core machine it takes as little CPU as possible from
 * the client being measured, and it measures itself: GET /stats returns what it actually did (mean
 * TTFT and gap as written, and how late its writes were against their due times), so a client's error
 * is read against what was really sent. `?reset` zeroes the counters.
 *
 *   cc -O2 -o timing-server timing-server.c && ./timing-server --ttft-ms 50 --itl-ms 10
 *
 * Prints `http://127.0.0.1:PORT/v1/completions` on its first line; SIGTERM ends it. Binds loopback only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define IN_CAP 65536

typedef struct conn {
  int fd;
  char in[IN_CAP];
  size_t in_len;
  char *out; /* bytes the socket did not take yet */
  size_t out_len, out_cap;
  /* the stream being answered, if any */
  int active;
  int tokens, sent;
  int64_t arrived_ns, first_due_ns, due_ns, last_write_ns;
  long heap_at; /* index in the deadline heap, -1 when not in it */
} conn;

static int64_t ttft_ns = 50000000, itl_ns = 10000000;
static conn **heap;
static long heap_len, heap_cap;
static int epfd, tfd;

static struct {
  long requests, gaps, chunks, late_max_ns;
  double ttft_sum_ns, gap_sum_ns, late_sum_ns;
  long writes;
  /* how long requests sat in the socket before this server read them */
  double read_delay_sum_ns;
  long reads;
} truth;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- a binary min-heap of streams by due time ---- */
static void heap_swap(long a, long b) {
  conn *t = heap[a];
  heap[a] = heap[b];
  heap[b] = t;
  heap[a]->heap_at = a;
  heap[b]->heap_at = b;
}
static void heap_up(long i) {
  while (i > 0) {
    long p = (i - 1) / 2;
    if (heap[p]->due_ns <= heap[i]->due_ns) break;
    heap_swap(p, i);
    i = p;
  }
}
static void heap_down(long i) {
  for (;;) {
    long l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap_len && heap[l]->due_ns < heap[m]->due_ns) m = l;
    if (r < heap_len && heap[r]->due_ns < heap[m]->due_ns) m = r;
    if (m == i) return;
    heap_swap(i, m);
    i = m;
  }
}
static void heap_push(conn *c) {
  if (heap_len == heap_cap) {
    heap_cap = heap_cap == 0 ? 1024 : heap_cap * 2;
    heap = realloc(heap, sizeof(conn *) * (size_t)heap_cap);
  }
  heap[heap_len] = c;
  c->heap_at = heap_len++;
  heap_up(c->heap_at);
}
static void heap_remove(conn *c) {
  long i = c->heap_at;
  if (i < 0) return;
  heap_len--;
  if (i != heap_len) {
    heap[i] = heap[heap_len];
    heap[i]->heap_at = i;
    heap_up(i);
    heap_down(heap[i]->heap_at);
  }
  c->heap_at = -1;
}

static void arm_timer(void) {
  struct itimerspec its = {0};
  if (heap_len > 0) {
    int64_t due = heap[0]->due_ns;
    if (due < 1) due = 1;
    its.it_value.tv_sec = due / 1000000000;
    its.it_value.tv_nsec = due % 1000000000;
  }
  timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void close_conn(conn *c) {
  heap_remove(c);
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  free(c->out);
  free(c);
}

/* Writes what it can now; keeps the rest for EPOLLOUT. Returns -1 when the peer is gone. */
static int send_bytes(conn *c, const char *p, size_t n) {
  if (c->out_len == 0) {
    ssize_t w = write(c->fd, p, n);
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (w > 0) {
      p += w;
      n -= (size_t)w;
    }
    truth.writes++;
    if (n == 0) return 0;
  }
  if (c->out_len + n > c->out_cap) {
    c->out_cap = (c->out_len + n) * 2;
    c->out = realloc(c->out, c->out_cap);
  }
  memcpy(c->out + c->out_len, p, n);
  c->out_len += n;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
  epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
  return 0;
}

static const char *TOKEN = "data: {\"id\":\"cmpl-t\",\"object\":\"text_completion\",\"model\":\"timing\",\"choices\":[{\"index\":0,\"text\":\" tok\",\"finish_reason\":null}]}\n\n";
static const char *LAST = "data: {\"id\":\"cmpl-t\",\"object\":\"text_completion\",\"model\":\"timing\",\"choices\":[{\"index\":0,\"text\":\" tok\",\"finish_reason\":\"length\"}]}\n\n";

/* One HTTP/1.1 chunk holding `body`, appended at `dst`; returns its length. */
static size_t chunked(char *dst, const char *body, size_t n) {
  int h = sprintf(dst, "%zx\r\n", n);
  memcpy(dst + h, body, n);
  memcpy(dst + h + n, "\r\n", 2);
  return (size_t)h + n + 2;
}

static void emit(conn *c, int64_t now) {
  char buf[1024], tail[256];
  int last = c->sent + 1 >= c->tokens;
  const char *ev = last ? LAST : TOKEN;
  size_t n = chunked(buf, ev, strlen(ev));
  if (last) {
    int t = snprintf(tail, sizeof tail, "data: {\"id\":\"cmpl-t\",\"choices\":[],\"usage\":{\"prompt_tokens\":32,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", c->tokens, c->tokens + 32);
    n += chunked(buf + n, tail, (size_t)t);
    memcpy(buf + n, "0\r\n\r\n", 5);
    n += 5;
  }
  int64_t late = now - c->due_ns;
  truth.late_sum_ns += (double)late;
  if (late > truth.late_max_ns) truth.late_max_ns = late;
  if (c->sent == 0) {
    truth.requests++;
    truth.ttft_sum_ns += (double)(now - c->arrived_ns);
  } else {
    truth.gaps++;
    truth.gap_sum_ns += (double)(now - c->last_write_ns);
  }
  truth.chunks++;
  c->last_write_ns = now;
  c->sent++;
  if (send_bytes(c, buf, n) < 0) {
    close_conn(c);
    return;
  }
  if (last) {
    c->active = 0;
    return;
  }
  c->due_ns = c->first_due_ns + (int64_t)c->sent * itl_ns;
  heap_push(c);
}

static void reply(conn *c, const char *status, const char *type, const char *body) {
  char buf[2048];
  int n = snprintf(buf, sizeof buf, "HTTP/1.1 %s\r\ncontent-type: %s\r\ncontent-length: %zu\r\nconnection: keep-alive\r\n\r\n%s", status, type, strlen(body), body);
  send_bytes(c, buf, (size_t)n);
}

static void handle(conn *c, const char *head, const char *body, size_t body_len, int64_t arrived) {
  if (strncmp(head, "GET /stats", 10) == 0) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"requests\":%ld,\"chunks\":%ld,\"writes\":%ld,\"mean_ttft_ms\":%.4f,\"mean_write_gap_ms\":%.4f,\"mean_late_ms\":%.4f,\"max_late_ms\":%.4f,\"mean_read_delay_ms\":%.4f}",
             truth.requests, truth.chunks, truth.writes, truth.requests ? truth.ttft_sum_ns / truth.requests / 1e6 : 0.0,
             truth.gaps ? truth.gap_sum_ns / truth.gaps / 1e6 : 0.0, truth.chunks ? truth.late_sum_ns / truth.chunks / 1e6 : 0.0,
             truth.late_max_ns / 1e6, truth.reads ? truth.read_delay_sum_ns / truth.reads / 1e6 : 0.0);
    reply(c, "200 OK", "application/json", json);
    if (strstr(head, "reset") != NULL && strstr(head, "reset") < strstr(head, "\r\n")) memset(&truth, 0, sizeof truth);
    return;
  }
  if (strncmp(head, "GET /v1/models", 14) == 0) {
    reply(c, "200 OK", "application/json", "{\"object\":\"list\",\"data\":[{\"id\":\"timing-model\",\"object\":\"model\"}]}");
    return;
  }
  if (strncmp(head, "GET /health", 11) == 0) {
    reply(c, "200 OK", "application/json", "{}");
    return;
  }
  if (strncmp(head, "POST ", 5) != 0 || c->active) {
    reply(c, "404 Not Found", "application/json", "{\"detail\":\"Not Found\"}");
    return;
  }
  int tokens = 16;
  const char *m = memmem(body, body_len, "\"max_tokens\":", 13);
  if (m != NULL) tokens = atoi(m + 13);
  if (tokens < 1) tokens = 1;
  static const char *HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n";
  if (send_bytes(c, HEAD, strlen(HEAD)) < 0) return;
  c->active = 1;
  c->tokens = tokens;
  c->sent = 0;
  c->arrived_ns = arrived;
  c->first_due_ns = arrived + ttft_ns;
  c->due_ns = c->first_due_ns;
  heap_push(c);
}

/* Reads what arrived; answers every whole request in it. Returns -1 when the connection closed. */
/*
 * When the bytes just read reached this socket: the kernel's receive timestamp (SO_TIMESTAMPNS, wall
 * clock) moved onto the monotonic clock. A request is timed from its arrival, not from when this
 * server got round to reading it, so a busy moment here is not counted against the client.
 */
static int64_t kernel_arrival(struct msghdr *m, int64_t fallback) {
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm != NULL; cm = CMSG_NXTHDR(m, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
      struct timespec ts, real, mono;
      memcpy(&ts, CMSG_DATA(cm), sizeof ts);
      clock_gettime(CLOCK_REALTIME, &real);
      clock_gettime(CLOCK_MONOTONIC, &mono);
      int64_t real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
      int64_t mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
      int64_t at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - (real_ns - mono_ns);
      return at < fallback ? at : fallback;
    }
  }
  return fallback;
}

static int on_readable(conn *c) {
  int64_t arrived = -1;
  for (;;) {
    struct iovec iov = {.iov_base = c->in + c->in_len, .iov_len = IN_CAP - c->in_len};
    char control[CMSG_SPACE(sizeof(struct timespec))];
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t r = recvmsg(c->fd, &m, 0);
    if (r == 0) return -1;
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return -1;
    }
    int64_t read_at = now_ns();
    arrived = kernel_arrival(&m, read_at);
    truth.read_delay_sum_ns += (double)(read_at - arrived);
    truth.reads++;
    c->in_len += (size_t)r;
    if (c->in_len == IN_CAP) return -1; /* a request larger than this server takes */
  }
  if (arrived < 0) arrived = now_ns();
  for (;;) {
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    size_t head_len = (size_t)(end - c->in) + 4;
    size_t body_len = 0;
    *end = '\0';
    for (char *p = c->in; *p != '\0'; p++) {
      if (strncasecmp(p, "\r\ncontent-length:", 17) == 0) body_len = (size_t)atol(p + 17);
    }
    *end = '\r';
    if (c->in_len < head_len + body_len) return 0;
    char head[512];
    size_t hl = head_len < sizeof head - 1 ? head_len : sizeof head - 1;
    memcpy(head, c->in, hl);
    head[hl] = '\0';
    handle(c, head, c->in + head_len, body_len, arrived);
    memmove(c->in, c->in + head_len + body_len, c->in_len - head_len - body_len);
    c->in_len -= head_len + body_len;
  }
}

static void on_writable(conn *c) {
  ssize_t w = write(c->fd, c->out, c->out_len);
  if (w > 0) {
    memmove(c->out, c->out + w, c->out_len - (size_t)w);
    c->out_len -= (size_t)w;
  }
  if (c->out_len == 0) {
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
  }
}

int main(int argc, char **argv) {
  int port = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--ttft-ms") == 0) ttft_ns = (int64_t)(atof(argv[i + 1]) * 1e6);
    else if (strcmp(argv[i], "--itl-ms") == 0) itl_ns = (int64_t)(atof(argv[i + 1]) * 1e6);
    else if (strcmp(argv[i], "--port") == 0) port = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: timing-server [--ttft-ms F] [--itl-ms F] [--port N]\n");
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_TIMERSLACK, 1UL); /* wake at the deadline, not up to 50 µs after it */
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 4096) != 0) {
    perror("timing-server: bind");
    return 1;
  }
  socklen_t al = sizeof addr;
  getsockname(ls, (struct sockaddr *)&addr, &al);
  printf("http://127.0.0.1:%d/v1/completions\n", ntohs(addr.sin_port));
  fflush(stdout);

  epfd = epoll_create1(0);
  tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ls};
  epoll_ctl(epfd, EPOLL_CTL_ADD, ls, &ev);
  ev.data.ptr = &tfd;
  epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev);
  struct epoll_event events[512];
  for (;;) {
    int n = epoll_wait(epfd, events, 512, -1);
    if (n < 0 && errno != EINTR) return 1;
    for (int i = 0; i < n; i++) {
      void *p = events[i].data.ptr;
      if (p == &ls) {
        for (;;) {
          int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK);
          if (fd < 0) break;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
          conn *c = calloc(1, sizeof *c);
          c->fd = fd;
          c->heap_at = -1;
          struct epoll_event cev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
          epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &cev);
        }
      } else if (p == &tfd) {
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) < 0) { /* spurious: the heap decides */ }
      } else {
        conn *c = p;
        if (events[i].events & EPOLLOUT) on_writable(c);
        if ((events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) && on_readable(c) < 0) close_conn(c);
      }
    }
    /* Every stream now due (within 20 µs), whatever woke us. */
    int64_t now = now_ns();
    while (heap_len > 0 && heap[0]->due_ns <= now + 20000) {
      conn *c = heap[0];
      heap_remove(c);
      emit(c, now);
      now = now_ns();
    }
    arm_timer();
  }
}
