package org.apache.spark.shuffle.sluice;

import io.sluice.auth.AuthConf;
import io.sluice.common.SluiceConf;
import io.sluice.common.UnknownKeys;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import scala.Tuple2;

/**
 * Sluice's settings inside a Spark application. Every {@code spark.sluice.*} key of the Spark
 * configuration reaches the core as {@code sluice.*} (so {@code spark.sluice.push.bufferSize} is
 * {@code sluice.push.bufferSize}); every {@code spark.hadoop.*} key reaches it as {@code
 * sluice.hadoop.*}, for readers of splits in the distributed tier. The keys below are the Spark
 * client's own.
 */
public final class SparkSluiceConf {
  static final String PREFIX = "spark.sluice.";

  /** Spark's Hadoop settings, which reach the core as {@code sluice.hadoop.*}. */
  static final String SPARK_HADOOP_PREFIX = "spark.hadoop.";

  /** Comma-separated {@code host:port} list of the Sluice servers the application uses. */
  public static final String SERVERS = "spark.sluice.servers";

  /**
   * Class of a {@link ServerDiscovery} that finds the servers when {@link #SERVERS} is not set (the
   * YARN discovery of the NodeManagers' aux services plugs in here).
   */
  public static final String SERVER_DISCOVERY = "spark.sluice.serverDiscovery";

  /** The client's own keys (the core declares the others), as the core sees them. */
  private static final List<String> OWN_KEYS =
      List.of(
          coreName(SERVERS),
          coreName(SERVER_DISCOVERY),
          coreName(YarnServerDiscovery.SERVER_PORT),
          coreName(ShuffleFallback.POLICY),
          coreName(ShuffleFallback.MAX_PARTITIONS));

  private SparkSluiceConf() {}

  /** {@code spark.sluice.x} as the core names it: {@code sluice.x}. */
  private static String coreName(String sparkKey) {
    return sparkKey.substring(PREFIX.length() - "sluice.".length());
  }

  /**
   * One warning per {@code spark.sluice.*} key of {@code spark} that neither the core nor this
   * client declares (usually a typo), naming it as written in Spark's configuration and the
   * declared key it is close to; never a value. {@code spark.sluice.hadoop.*} is Hadoop's and not
   * checked.
   */
  static List<String> unknownKeyWarnings(SparkConf spark) {
    List<String> names = new ArrayList<>();
    for (Tuple2<String, String> e : spark.getAll()) {
      if (e._1().startsWith(PREFIX)) {
        names.add(coreName(e._1()));
      }
    }
    return UnknownKeys.core().withNames(OWN_KEYS).shownWithPrefix("spark.").warnings(names);
  }

  /**
   * Refuses settings that cannot work with Sluice as the shuffle manager.
   *
   * @throws IllegalArgumentException naming the setting and what to change
   */
  static void checkCompatible(SparkConf spark) {
    if (spark.getBoolean(PREFIX + "auth.enabled", false)) {
      if (!spark.getBoolean("spark.authenticate", false)) {
        throw new IllegalArgumentException(
            "spark.sluice.auth.enabled=true needs spark.authenticate=true: Sluice derives each"
                + " application's key from Spark's own application secret, and without"
                + " spark.authenticate anyone reaching the driver could read the configuration"
                + " executors fetch. Set spark.authenticate=true.");
      }
      if (spark.contains(PREFIX + "auth.clusterSecret")) {
        throw new IllegalArgumentException(
            "spark.sluice.auth.clusterSecret would be sent to every executor with the Spark"
                + " configuration, and only the driver may hold it: put the secret in a file"
                + " readable on the driver's host and set spark.sluice.auth.clusterSecretFile.");
      }
    }
    if (spark.getBoolean("spark.shuffle.push.enabled", false)) {
      throw new IllegalArgumentException(
          "spark.shuffle.push.enabled=true (Spark's push-based shuffle to its external shuffle"
              + " service) cannot be combined with Sluice as spark.shuffle.manager: Sluice already"
              + " pushes map output to its servers, and Spark would try to push local shuffle"
              + " files that do not exist. Set spark.shuffle.push.enabled=false.");
    }
  }

  /**
   * The core's configuration: every {@code spark.sluice.*} key as {@code sluice.*}. When Spark's
   * {@code spark.shuffle.compress} is false and {@code spark.sluice.push.compression} is not set,
   * batches are not compressed either.
   */
  public static SluiceConf toSluiceConf(SparkConf spark) {
    return toSluiceConf(spark, true);
  }

  /**
   * Like {@link #toSluiceConf(SparkConf)}; on executors ({@code isDriver} false) without the
   * cluster secret's file, which only the driver's host has and only a coordinator uses.
   */
  static SluiceConf toSluiceConf(SparkConf spark, boolean isDriver) {
    Map<String, String> values = new HashMap<>();
    for (Tuple2<String, String> e : spark.getAll()) {
      if (e._1().startsWith(PREFIX)) {
        values.put("sluice." + e._1().substring(PREFIX.length()), e._2());
      }
    }
    // what Spark hands its own Hadoop clients: readers of the distributed tier use it too (an
    // explicit spark.sluice.hadoop.* setting wins)
    for (Tuple2<String, String> e : spark.getAll()) {
      if (e._1().startsWith(SPARK_HADOOP_PREFIX)) {
        values.putIfAbsent(
            SluiceConf.HADOOP_PREFIX + e._1().substring(SPARK_HADOOP_PREFIX.length()), e._2());
      }
    }

    if (!spark.getBoolean("spark.shuffle.compress", true)
        && !values.containsKey("sluice.push.compression")) {
      values.put("sluice.push.compression", "none");
    }
    SluiceConf conf = SluiceConf.of(values);
    return isDriver ? conf : AuthConf.withoutClusterSecret(conf);
  }

  /**
   * With {@code sluice.auth.enabled}, {@code conf} with Spark's application secret (the one of
   * {@code spark.authenticate}, which Spark gives the driver and every executor) as the application
   * secret, unless one is set explicitly.
   *
   * @throws IllegalStateException when Spark has no secret
   */
  static SluiceConf withSparkSecret(SluiceConf conf) {
    if (!conf.get(AuthConf.ENABLED)
        || !conf.get(AuthConf.APP_SECRET).isEmpty()
        || !conf.get(AuthConf.APP_SECRET_FILE).isEmpty()) {
      return conf;
    }
    SparkEnv env = SparkEnv.get();
    String secret = env == null ? null : env.securityManager().getSecretKey();
    if (secret == null || secret.isEmpty()) {
      throw new IllegalStateException(
          "spark.sluice.auth.enabled=true but Spark has no application secret: set"
              + " spark.authenticate=true (on YARN Spark makes one per application; elsewhere"
              + " set spark.authenticate.secret)");
    }
    return conf.with(AuthConf.APP_SECRET.name(), secret);
  }

  /** The host executors reach the driver's coordinator at. */
  static String driverHost(SparkConf spark) {
    return spark.get("spark.driver.host", "localhost");
  }

  /** The address the driver's coordinator binds. */
  static String driverBindAddress(SparkConf spark) {
    return spark.get("spark.driver.bindAddress", driverHost(spark));
  }
}
