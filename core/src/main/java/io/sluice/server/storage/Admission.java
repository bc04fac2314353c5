package io.sluice.server.storage;

/**
 * What new data the server takes, decided by its lifecycle: everything while it serves; while it is
 * decommissioned no new shuffle and no new split (map partitions already placed here still finish,
 * so no producer fails); once it stops nothing new. Thread safe.
 */
public final class Admission {
  private volatile boolean decommissioning;
  private volatile boolean stopping;

  void decommission(boolean on) {
    decommissioning = on;
  }

  void stop() {
    stopping = true;
  }

  public boolean isDecommissioning() {
    return decommissioning;
  }

  boolean isStopping() {
    return stopping;
  }

  /** Why a new split, named {@code split}, is refused; null when it is taken. */
  String newSplitRefusal(SplitKey split) {
    if (stopping) {
      return "this server is stopping and takes no new split (" + split + ")";
    }
    if (decommissioning) {
      return "this server is being decommissioned and takes no new split (" + split + ")";
    }
    return null;
  }
}
