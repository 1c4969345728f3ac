#ifndef OPENCLAW_CEPOLL_SHIM_H
#define OPENCLAW_CEPOLL_SHIM_H

// Linux epoll for WebSocketTransport's event loop (Glibc's Swift module map does not include
// sys/epoll.h). A Linux-only dependency of WebSocketTransport; elsewhere the loop uses poll(2).
// The helpers keep the packed `struct epoll_event` and the EPOLL* flags on the C side; readiness
// comes back as bits: 1 = readable, 2 = writable, 4 = hang-up or error.
#if defined(__linux__)
#include <stdint.h>
#include <sys/epoll.h>

/// `epoll_create1(EPOLL_CLOEXEC)`.
static inline int openclaw_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/// Adds (`op` 1), modifies (2) or removes (3) `fd`, listening for reading and/or writing;
/// `id` comes back from `openclaw_epoll_wait`.
static inline int openclaw_epoll_control(int epfd, int op, int fd, int want_read, int want_write, uint64_t id) {
    struct epoll_event event;
    event.events = (want_read ? (EPOLLIN | EPOLLRDHUP) : 0) | (want_write ? EPOLLOUT : 0);
    event.data.u64 = id;
    int operation = op == 1 ? EPOLL_CTL_ADD : (op == 2 ? EPOLL_CTL_MOD : EPOLL_CTL_DEL);
    return epoll_ctl(epfd, operation, fd, &event);
}

/// Waits up to `timeout_ms` (-1 = forever) for at most `capacity` (<= 256) ready descriptors;
/// fills `ids` and `readiness` and returns the count (or -1 with errno).
static inline int openclaw_epoll_wait(int epfd, uint64_t *ids, uint8_t *readiness, int capacity, int timeout_ms) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, events, capacity, timeout_ms);
    for (int index = 0; index < count; index++) {
        uint32_t flags = events[index].events;
        ids[index] = events[index].data.u64;
        readiness[index] = (uint8_t)(((flags & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ? 1 : 0)
            | ((flags & (EPOLLOUT | EPOLLERR)) ? 2 : 0)
            | ((flags & (EPOLLHUP | EPOLLERR)) ? 4 : 0));
    }
    return count;
}
#endif

#endif
