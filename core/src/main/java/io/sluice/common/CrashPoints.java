package io.sluice.common;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Named points in the server's commit path where a crash test can make the process die at once, as
 * {@code kill -9} would: no shutdown hook runs, nothing is flushed or answered. A JVM started with
 * {@code -Dsluice.test.crashAt=<point>} halts the first time it reaches that point; without the
 * property every call is a no-op. Only tests set it (see {@code CommitCrashIT}).
 */
public final class CrashPoints {
  /** A split's data is written, before its file is synced and renamed. */
  public static final String SPLIT_BEFORE_RENAME = "split.beforeRename";

  /** A split's file is renamed to its committed name, before the state store records it. */
  public static final String SPLIT_AFTER_RENAME = "split.afterRename";

  /** A split is committed and recorded, before the other splits of the commit are. */
  public static final String SPLIT_AFTER_RECORD = "split.afterRecord";

  /** Every split of a commit is committed and recorded, before the answer is sent. */
  public static final String COMMIT_BEFORE_ANSWER = "commit.beforeAnswer";

  private static final Logger LOG = LoggerFactory.getLogger(CrashPoints.class);

  private static final String AT = System.getProperty("sluice.test.crashAt", "");

  private CrashPoints() {}

  /** Halts the JVM when it was started to crash at {@code point}. */
  public static void reach(String point) {
    if (!AT.isEmpty() && AT.equals(point)) {
      LOG.error("sluice.test.crashAt: halting at {}", point);
      Runtime.getRuntime().halt(137);
    }
  }
}
