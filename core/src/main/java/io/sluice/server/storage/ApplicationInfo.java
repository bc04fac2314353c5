package io.sluice.server.storage;

import java.util.List;

/** What one application holds on this server at one moment (the admin API's view). */
public final class ApplicationInfo {
  private final String appId;
  private final long millisSinceHeard;
  private final List<ServerShuffle> shuffles;
  private final long pushedBytes;
  private final long readBytes;
  private final long refusedBytes;

  ApplicationInfo(
      String appId,
      long millisSinceHeard,
      List<ServerShuffle> shuffles,
      long pushedBytes,
      long readBytes,
      long refusedBytes) {
    this.appId = appId;
    this.millisSinceHeard = millisSinceHeard;
    this.shuffles = List.copyOf(shuffles);
    this.pushedBytes = pushedBytes;
    this.readBytes = readBytes;
    this.refusedBytes = refusedBytes;
  }

  /** Bytes of its pushes refused for its limit (sluice.app.maxStoredBytes). */
  public long refusedBytes() {
    return refusedBytes;
  }

  public String appId() {
    return appId;
  }

  /** How long ago a registration or heartbeat of the application last arrived. */
  public long millisSinceHeard() {
    return millisSinceHeard;
  }

  /** Its shuffles registered here, by shuffle id. */
  public List<ServerShuffle> shuffles() {
    return shuffles;
  }

  /** Bytes of its shuffles held here, on disk or buffered. */
  public long storedBytes() {
    long bytes = 0;
    for (ServerShuffle s : shuffles) {
      bytes += s.storedBytes();
    }
    return bytes;
  }

  /** Bytes pushed to it (taken) since it registered here. */
  public long pushedBytes() {
    return pushedBytes;
  }

  /** Bytes read from it since it registered here. */
  public long readBytes() {
    return readBytes;
  }
}
