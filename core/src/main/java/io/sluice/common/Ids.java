package io.sluice.common;

import java.util.regex.Pattern;

/** Validation of the identifiers that reach file paths and logs. */
public final class Ids {
  private static final Pattern APP_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  private Ids() {}

  /**
   * Checks that an application id is safe to use as a directory name.
   *
   * @throws IllegalArgumentException naming the id and what is allowed
   */
  public static String checkAppId(String appId) {
    if (appId == null || !APP_ID.matcher(appId).matches()) {
      throw new IllegalArgumentException(
          "invalid application id '"
              + appId
              + "': expected 1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-'");
    }
    return appId;
  }

  /** "app/shuffle 3/partition 7 epoch 0" style name used in logs and errors. */
  public static String split(String appId, int shuffleId, int partitionId, int epoch) {
    return "app "
        + appId
        + " shuffle "
        + shuffleId
        + " partition "
        + partitionId
        + " epoch "
        + epoch;
  }

  public static String shuffle(String appId, int shuffleId) {
    return "app " + appId + " shuffle " + shuffleId;
  }
}
