package org.apache.spark.shuffle.sluice;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;

/**
 * The application a Spark driver attempt is to the Sluice servers. On YARN in cluster mode a failed
 * driver is restarted as a new attempt with the same {@code spark.app.id}; were both the same
 * application to the servers, the second would push into the first one's splits (committed ones
 * refuse it, open ones mix two runs' batches). So each attempt is an application of its own, {@code
 * <spark.app.id>-attempt-<attempt id>}, and an attempt releases the data of the attempts before it
 * when it starts (numeric attempt ids, as YARN's, 1, 2, ...). Without an attempt id (local mode,
 * standalone client mode) the application is {@code spark.app.id}.
 */
final class DriverAttempt {
  private final String sparkAppId;
  private final Optional<String> attemptId;

  DriverAttempt(String sparkAppId, Optional<String> attemptId) {
    this.sparkAppId = sparkAppId;
    this.attemptId = attemptId;
  }

  /** The running driver's attempt. */
  static DriverAttempt current(String sparkAppId) {
    Optional<String> attempt = Optional.empty();
    scala.Option<SparkContext> active = SparkContext$.MODULE$.getActive();
    if (active.isDefined() && active.get().applicationAttemptId().isDefined()) {
      attempt = Optional.of(active.get().applicationAttemptId().get());
    }
    return new DriverAttempt(sparkAppId, attempt);
  }

  /** The Sluice application id of this attempt. */
  String appId() {
    return attemptId.map(a -> sparkAppId + "-attempt-" + a).orElse(sparkAppId);
  }

  /** The Sluice application ids of the attempts before this one (empty when unknown). */
  List<String> earlierAppIds() {
    List<String> earlier = new ArrayList<>();
    if (attemptId.isEmpty()) {
      return earlier;
    }
    int attempt;
    try {
      attempt = Integer.parseInt(attemptId.get());
    } catch (NumberFormatException e) {
      return earlier;
    }
    for (int a = 1; a < attempt; a++) {
      earlier.add(sparkAppId + "-attempt-" + a);
    }
    return earlier;
  }
}
