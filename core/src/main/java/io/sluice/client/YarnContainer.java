package io.sluice.client;

/**
 * What a client learns of the YARN container it runs in. YARN gives every container its id in the
 * {@code CONTAINER_ID} environment variable: {@code container_[e<epoch>_]<clusterTimestamp>_<app>_
 * <attempt>_<container>}, which names the application as {@code application_<clusterTimestamp>_
 * <app>}.
 */
public final class YarnContainer {
  private YarnContainer() {}

  /**
   * The YARN application id of container id {@code containerId}, or {@code ""} when it is null or
   * not a container id (the process does not run in a YARN container).
   */
  public static String applicationId(String containerId) {
    if (containerId == null || !containerId.startsWith("container_")) {
      return "";
    }
    String[] parts = containerId.substring("container_".length()).split("_", -1);
    int first = parts.length == 5 && parts[0].startsWith("e") ? 1 : 0;
    if (parts.length - first != 4) {
      return "";
    }
    String clusterTimestamp = parts[first];
    String app = parts[first + 1];
    if (!digits(clusterTimestamp) || !digits(app)) {
      return "";
    }
    // kept as the container id prints it (zero-padded), which is how YARN prints application ids
    return "application_" + clusterTimestamp + "_" + app;
  }

  private static boolean digits(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (!Character.isDigit(s.charAt(i))) {
        return false;
      }
    }
    return true;
  }
}
