package io.sluice.server.storage;

/**
 * How many splits and map partitions one application may write at once on this server, asked by
 * {@link DataDirectories} before it opens one; the server's {@code ApplicationLimits} answers.
 */
public interface ApplicationQuota {
  /** No limit. */
  ApplicationQuota NONE =
      new ApplicationQuota() {
        @Override
        public int maxOpenWriters(String appId) {
          return 0;
        }

        @Override
        public String openWritersRefusal(String appId, int max, String what) {
          return "";
        }
      };

  /** Most writers application {@code appId} may have open at once; 0 for no limit. */
  int maxOpenWriters(String appId);

  /**
   * Why {@code what}, a new writer of application {@code appId}, is refused at {@code max}: names
   * the limit and the setting.
   */
  String openWritersRefusal(String appId, int max, String what);
}
