package io.sluice.testutil;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;

/**
 * Every thread of this JVM with its stack and the locks it holds or waits for, for test failures.
 */
public final class ThreadDump {
  private ThreadDump() {}

  public static String all() {
    StringBuilder dump = new StringBuilder();
    for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
      dump.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
      if (t.getLockName() != null) {
        dump.append(" on ").append(t.getLockName());
      }
      if (t.getLockOwnerName() != null) {
        dump.append(" owned by \"").append(t.getLockOwnerName()).append('"');
      }
      dump.append('\n');
      for (StackTraceElement frame : t.getStackTrace()) {
        dump.append("    at ").append(frame).append('\n');
      }
    }
    return dump.toString();
  }
}
