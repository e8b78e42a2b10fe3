// gda_read_host_checked (cdevice.h): a read of host memory that fails with
// EFAULT instead of a segmentation fault when src is not mapped readable.
// process_vm_readv on our own process does the copy in the kernel; where a
// sandbox forbids it (seccomp: ENOSYS or EPERM), write() into a pipe does,
// since the kernel checks a write's source buffer the same way.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gda.h"

static int read_through_pipe(void* dst, const void* src, size_t n) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  int rc = 0;
  size_t done = 0;
  while (rc == 0 && done < n) {
    size_t chunk = n - done < 4096 ? n - done : 4096;  // a pipe holds at least a page
    ssize_t w = write(fds[1], (const char*)src + done, chunk);
    if (w < 0) {
      rc = errno == EINTR ? 0 : errno;
      continue;
    }
    size_t got = 0;
    while (rc == 0 && got < (size_t)w) {
      ssize_t r = read(fds[0], (char*)dst + done + got, (size_t)w - got);
      if (r > 0) {
        got += (size_t)r;
      } else if (r < 0 && errno != EINTR) {
        rc = errno;
      } else if (r == 0) {
        rc = EIO;
      }
    }
    done += got;
  }
  close(fds[0]);
  close(fds[1]);
  return rc;
}

int gda_read_host_checked(void* dst, const void* src, size_t n) {
  size_t done = 0;
  while (done < n) {
    struct iovec local = {(char*)dst + done, n - done};
    struct iovec remote = {(void*)((const char*)src + done), n - done};
    ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (r > 0) {
      done += (size_t)r;
    } else if (r == 0) {
      return EFAULT;  // nothing more could be read
    } else if (errno == ENOSYS || errno == EPERM) {
      return read_through_pipe((char*)dst + done, (const char*)src + done, n - done);
    } else if (errno != EINTR) {
      return errno;
    }
  }
  return 0;
}
