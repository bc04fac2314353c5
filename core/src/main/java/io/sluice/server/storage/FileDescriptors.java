package io.sluice.server.storage;

/**
 * Tells a process out of file descriptors from a failed disk: both show as an {@link
 * java.io.IOException}, but only the disk is the directory's fault. Java gives no errno, so the
 * operating system's message decides ("Too many open files", EMFILE and ENFILE alike).
 */
final class FileDescriptors {
  private FileDescriptors() {}

  /** Whether {@code failure}, or a cause of it, is the process or system out of descriptors. */
  static boolean exhausted(Throwable failure) {
    int depth = 0;
    for (Throwable t = failure; t != null && depth < 16; t = t.getCause(), depth++) {
      String message = t.getMessage();
      if (message != null && message.contains("Too many open files")) {
        return true;
      }
    }
    return false;
  }

  /** What an operator reads when it happens. */
  static String advice() {
    return "the server is out of file descriptors (raise its limit: ulimit -n, or LimitNOFILE"
        + " under systemd); the data directory is not taken out of service";
  }
}
