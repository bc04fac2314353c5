package io.sluice.server;

import io.sluice.server.storage.ShuffleRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one application may hold on this server, so that no job takes the disk from the others:
 * {@code sluice.app.maxStoredBytes} bytes of its registered shuffles. A push past it is refused
 * QUOTA_EXCEEDED with a message naming the application, the limit and the setting, which the client
 * does not retry: the task fails with it. The refused bytes are counted per application ({@code
 * sluice_application_refused_bytes_total}); an application's first refusal is logged as a warning,
 * the next ones at debug level. Thread safe.
 */
final class ApplicationLimits {
  private static final Logger LOG = LoggerFactory.getLogger(ApplicationLimits.class);

  private final ShuffleRegistry registry;
  private final long maxStoredBytes;

  /**
   * @param maxStoredBytes {@code sluice.app.maxStoredBytes}; 0 for no limit
   */
  ApplicationLimits(ShuffleRegistry registry, long maxStoredBytes) {
    this.registry = registry;
    this.maxStoredBytes = maxStoredBytes;
  }

  /**
   * Why application {@code appId} may not store {@code bytes} more here, or null when it may; a
   * refusal is counted.
   */
  String storeRefusal(String appId, long bytes) {
    if (maxStoredBytes <= 0) {
      return null;
    }
    long stored = registry.storedBytes(appId);
    if (stored + bytes <= maxStoredBytes) {
      return null;
    }
    boolean first = registry.countRefused(appId, bytes);
    String message =
        "application "
            + appId
            + " stores "
            + stored
            + " bytes on this server and "
            + bytes
            + " more would pass its limit of "
            + maxStoredBytes
            + " bytes (sluice.app.maxStoredBytes); the server takes no more of its data until its"
            + " shuffles end, or the limit is raised";
    if (first) {
      LOG.warn("Refusing pushes: {}", message);
    } else {
      LOG.debug("Refusing pushes: {}", message);
    }
    return message;
  }
}
